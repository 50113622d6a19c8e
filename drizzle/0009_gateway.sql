CREATE TABLE "chain_payments" (
	"tx_hash" text PRIMARY KEY NOT NULL,
	"purpose" text NOT NULL,
	"reference" text NOT NULL,
	"chain_id" integer NOT NULL,
	"token" text NOT NULL,
	"payer" text NOT NULL,
	"recipient" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chain_payments" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "chat_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"message" text NOT NULL,
	"weight" integer DEFAULT 1 NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"result" jsonb,
	"error" text,
	"claimed_by_agent_id" text,
	"claimed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chat_jobs" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "payment_session_vouchers" (
	"session_id" text NOT NULL,
	"nonce" numeric(78, 0) NOT NULL,
	"cumulative_amount" numeric(78, 0) NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"plugin_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_session_vouchers_session_id_nonce_pk" PRIMARY KEY("session_id","nonce")
);
--> statement-breakpoint
ALTER TABLE "payment_session_vouchers" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "payment_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"wallet_address" text NOT NULL,
	"deposit_tx_hash" text NOT NULL,
	"chain_id" integer NOT NULL,
	"token" text NOT NULL,
	"deposit_amount" numeric(78, 0) NOT NULL,
	"spent_amount" numeric(78, 0) DEFAULT '0' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_sessions_deposit_tx_hash_unique" UNIQUE("deposit_tx_hash")
);
--> statement-breakpoint
ALTER TABLE "payment_sessions" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "permission_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text,
	"agent_id" text NOT NULL,
	"tool_name" text NOT NULL,
	"tool_input" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"reason" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "permission_requests" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "chat_jobs" ADD CONSTRAINT "chat_jobs_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_jobs" ADD CONSTRAINT "chat_jobs_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_session_vouchers" ADD CONSTRAINT "payment_session_vouchers_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."payment_sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "permission_requests" ADD CONSTRAINT "permission_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "chat_jobs_user_idx" ON "chat_jobs" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "payment_sessions_wallet_idx" ON "payment_sessions" USING btree ("wallet_address");--> statement-breakpoint
CREATE INDEX "permission_requests_user_idx" ON "permission_requests" USING btree ("user_id","status","created_at");--> statement-breakpoint
CREATE POLICY "chain_payments_service" ON "chain_payments" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "chat_jobs_owner" ON "chat_jobs" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "chat_jobs_service" ON "chat_jobs" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "payment_session_vouchers_service" ON "payment_session_vouchers" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "payment_sessions_service" ON "payment_sessions" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "permission_requests_owner" ON "permission_requests" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "permission_requests_service" ON "permission_requests" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
ALTER TABLE "chat_jobs" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "permission_requests" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "chain_payments" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "payment_sessions" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "payment_session_vouchers" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
-- chat_jobs: the owner queues a job (insert), reads it, marks it failed when the queue refuses it, and claims it
-- for one of their agents. Delivery to the runtime runs as the service.
GRANT SELECT, INSERT ON "chat_jobs" TO app_user;--> statement-breakpoint
GRANT UPDATE ("status", "error", "claimed_by_agent_id", "claimed_at", "updated_at") ON "chat_jobs" TO app_user;--> statement-breakpoint
-- permission_requests: the hook creates them as the service; the owner reads theirs and decides each once.
GRANT SELECT ON "permission_requests" TO app_user;--> statement-breakpoint
GRANT UPDATE ("status", "decided_at") ON "permission_requests" TO app_user;
-- chain_payments, payment_sessions, payment_session_vouchers: nothing for app_user (anonymous wallets; the
-- gateway's payment code runs as the service).
