CREATE TABLE "agent_events" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"user_id" text NOT NULL,
	"kind" text NOT NULL,
	"from_state" text,
	"to_state" text NOT NULL,
	"reason" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_events" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "agent_watchdog" (
	"agent_id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"state" text DEFAULT 'healthy' NOT NULL,
	"reason" text,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"repair_attempts" integer DEFAULT 0 NOT NULL,
	"crash_times" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"lease_until" timestamp with time zone,
	"lease_owner" text,
	"last_probe_at" timestamp with time zone,
	"next_check_at" timestamp with time zone,
	"owner_notified_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_watchdog" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "agents" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"name" text NOT NULL,
	"plan" text,
	"ai_provider" text,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'provisioning' NOT NULL,
	"status_reason" text,
	"verification" text DEFAULT 'unverified' NOT NULL,
	"verified_at" timestamp with time zone,
	"image" text,
	"runtime_provider" text,
	"runtime_service_id" text,
	"runtime_url" text,
	"gateway_token_key_id" text,
	"gateway_token" text,
	"heartbeat_enabled" boolean DEFAULT false NOT NULL,
	"heartbeat_frequency" text DEFAULT '1h' NOT NULL,
	"heartbeat_message" text,
	"provisioned_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"last_seen_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agents" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_events" ADD CONSTRAINT "agent_events_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_events" ADD CONSTRAINT "agent_events_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_watchdog" ADD CONSTRAINT "agent_watchdog_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_watchdog" ADD CONSTRAINT "agent_watchdog_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_events_agent_idx" ON "agent_events" USING btree ("agent_id","at");--> statement-breakpoint
CREATE INDEX "agent_watchdog_next_idx" ON "agent_watchdog" USING btree ("next_check_at");--> statement-breakpoint
CREATE INDEX "agents_user_idx" ON "agents" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "agents_user_name_idx" ON "agents" USING btree ("user_id","name");--> statement-breakpoint
CREATE POLICY "agent_events_owner" ON "agent_events" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "agent_events_service" ON "agent_events" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "agent_watchdog_service" ON "agent_watchdog" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "agents_owner" ON "agents" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "agents_service" ON "agents" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
ALTER TABLE "agents" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_watchdog" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_events" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
-- agents: a user provisions (insert), lists, changes and deletes their own; lifecycle routes record what the
-- provider did (status, runtime ids, token, timestamps) as that user. Never user_id or created_at.
GRANT SELECT, INSERT, DELETE ON "agents" TO app_user;--> statement-breakpoint
GRANT UPDATE ("name", "plan", "ai_provider", "config", "status", "status_reason", "verification", "verified_at", "image", "runtime_provider", "runtime_service_id", "runtime_url", "gateway_token_key_id", "gateway_token", "heartbeat_enabled", "heartbeat_frequency", "heartbeat_message", "provisioned_at", "started_at", "last_seen_at", "updated_at") ON "agents" TO app_user;--> statement-breakpoint
-- agent_events: the owner reads their agents' history; their own lifecycle calls append to it.
GRANT SELECT, INSERT ON "agent_events" TO app_user;
-- agent_watchdog: nothing for app_user (the watchdog runs as the service).
