CREATE TABLE "files" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"filename" text NOT NULL,
	"storage_key" text NOT NULL,
	"size" bigint NOT NULL,
	"mime_type" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "files_storage_key_unique" UNIQUE("storage_key")
);
--> statement-breakpoint
ALTER TABLE "files" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "mux_events" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "mux_events" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "radio_guest_passes" (
	"wallet" text PRIMARY KEY NOT NULL,
	"granted_by" text,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "radio_guest_passes" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "radio_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"wallet" text NOT NULL,
	"name" text NOT NULL,
	"city" text,
	"stream_id" text,
	"playback_id" text,
	"status" text DEFAULT 'active' NOT NULL,
	"access_path" text NOT NULL,
	"tx_hash" text,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "radio_sessions_tx_hash_unique" UNIQUE("tx_hash")
);
--> statement-breakpoint
ALTER TABLE "radio_sessions" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "skill_installations" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"skill_id" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"installed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "skill_installations" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "skill_ratings" (
	"skill_id" text NOT NULL,
	"user_id" text NOT NULL,
	"rating" integer NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "skill_ratings_skill_id_user_id_pk" PRIMARY KEY("skill_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "skill_ratings" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "skills" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"name_key" text NOT NULL,
	"description" text NOT NULL,
	"category" text DEFAULT 'custom' NOT NULL,
	"author" text,
	"author_user_id" text,
	"code" text,
	"source_url" text,
	"featured" boolean DEFAULT false NOT NULL,
	"downloads" integer DEFAULT 0 NOT NULL,
	"rating_sum" integer DEFAULT 0 NOT NULL,
	"rating_count" integer DEFAULT 0 NOT NULL,
	"mcp_enabled" boolean DEFAULT false NOT NULL,
	"mcp_config" jsonb,
	"widget_url" text,
	"widget_config" jsonb,
	"scan" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "skills" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "social_posts" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "social_posts" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "storage_usage" (
	"user_id" text PRIMARY KEY NOT NULL,
	"bytes" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "storage_usage" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "user_wallets" (
	"user_id" text PRIMARY KEY NOT NULL,
	"address" text NOT NULL,
	"wallet_id" text NOT NULL,
	"network" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "user_wallets" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_installations" ADD CONSTRAINT "skill_installations_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_installations" ADD CONSTRAINT "skill_installations_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_installations" ADD CONSTRAINT "skill_installations_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_ratings" ADD CONSTRAINT "skill_ratings_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_ratings" ADD CONSTRAINT "skill_ratings_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skills" ADD CONSTRAINT "skills_author_user_id_users_id_fk" FOREIGN KEY ("author_user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "social_posts" ADD CONSTRAINT "social_posts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "social_posts" ADD CONSTRAINT "social_posts_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_usage" ADD CONSTRAINT "storage_usage_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_wallets" ADD CONSTRAINT "user_wallets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "files_user_idx" ON "files" USING btree ("user_id","agent_id");--> statement-breakpoint
CREATE UNIQUE INDEX "radio_sessions_current_idx" ON "radio_sessions" USING btree ("wallet") WHERE status in ('active', 'live');--> statement-breakpoint
CREATE INDEX "radio_sessions_stream_idx" ON "radio_sessions" USING btree ("stream_id");--> statement-breakpoint
CREATE UNIQUE INDEX "skill_installations_agent_skill_idx" ON "skill_installations" USING btree ("agent_id","skill_id");--> statement-breakpoint
CREATE INDEX "skill_installations_skill_idx" ON "skill_installations" USING btree ("skill_id");--> statement-breakpoint
CREATE UNIQUE INDEX "skills_name_key_idx" ON "skills" USING btree ("name_key");--> statement-breakpoint
CREATE INDEX "skills_category_idx" ON "skills" USING btree ("category");--> statement-breakpoint
CREATE INDEX "social_posts_agent_idx" ON "social_posts" USING btree ("agent_id","created_at");--> statement-breakpoint
CREATE POLICY "files_owner" ON "files" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "files_service" ON "files" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "mux_events_service" ON "mux_events" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "radio_guest_passes_service" ON "radio_guest_passes" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "radio_sessions_service" ON "radio_sessions" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "skill_installations_owner" ON "skill_installations" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "skill_installations_service" ON "skill_installations" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "skill_ratings_owner" ON "skill_ratings" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "skill_ratings_service" ON "skill_ratings" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "skills_read" ON "skills" AS PERMISSIVE FOR SELECT TO "app_user" USING (true);--> statement-breakpoint
CREATE POLICY "skills_author_insert" ON "skills" AS PERMISSIVE FOR INSERT TO "app_user" WITH CHECK (author_user_id = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "skills_service" ON "skills" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "social_posts_owner" ON "social_posts" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "social_posts_service" ON "social_posts" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "storage_usage_owner" ON "storage_usage" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "storage_usage_service" ON "storage_usage" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "user_wallets_owner" ON "user_wallets" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "user_wallets_service" ON "user_wallets" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
ALTER TABLE "files" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "storage_usage" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "skills" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "skill_ratings" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "skill_installations" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "social_posts" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "radio_sessions" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "radio_guest_passes" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "mux_events" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "user_wallets" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
-- files: the uploader records a pending file, marks it stored, lists, serves and deletes their own.
GRANT SELECT, INSERT, DELETE ON "files" TO app_user;--> statement-breakpoint
GRANT UPDATE ("status") ON "files" TO app_user;--> statement-breakpoint
-- storage_usage: the quota row moves with each upload and delete, as its user.
GRANT SELECT, INSERT ON "storage_usage" TO app_user;--> statement-breakpoint
GRANT UPDATE ("bytes", "updated_at") ON "storage_usage" TO app_user;--> statement-breakpoint
-- skills: a public catalog every user reads; a user creates skills as their author (policy); counters change
-- through the service.
GRANT SELECT, INSERT ON "skills" TO app_user;--> statement-breakpoint
-- skill_ratings: a user rates (and re-rates) as themself.
GRANT SELECT, INSERT ON "skill_ratings" TO app_user;--> statement-breakpoint
GRANT UPDATE ("rating", "updated_at") ON "skill_ratings" TO app_user;--> statement-breakpoint
-- skill_installations: a user installs, enables, disables and removes skills on their own agents.
GRANT SELECT, INSERT, DELETE ON "skill_installations" TO app_user;--> statement-breakpoint
GRANT UPDATE ("enabled", "updated_at") ON "skill_installations" TO app_user;--> statement-breakpoint
-- social_posts: an agent's owner posts and reads their agents' posts.
GRANT SELECT, INSERT ON "social_posts" TO app_user;--> statement-breakpoint
-- user_wallets: a user creates and reads their managed wallet.
GRANT SELECT, INSERT ON "user_wallets" TO app_user;
-- radio_sessions, radio_guest_passes, mux_events: nothing for app_user (wallets, not users; the service).
