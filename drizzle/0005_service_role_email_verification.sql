-- app_service: the role the named cross-user queries run as (lib/db/cross-user.ts lists them). Like app_user
-- it owns nothing; each table lets it in through its own "<table>_service" policy below.
DO $$
BEGIN
  BEGIN
    CREATE ROLE app_service NOLOGIN;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
  END;
  BEGIN
    EXECUTE 'GRANT app_service TO ' || quote_ident(current_user);
  EXCEPTION WHEN others THEN
    IF NOT pg_has_role(current_user, 'app_service', 'MEMBER') THEN RAISE; END IF;
  END;
END
$$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO app_service;--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app_service;--> statement-breakpoint
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO app_service;--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO app_service;--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO app_service;--> statement-breakpoint
CREATE TABLE "email_verifications" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"email" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "email_verifications" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "referrals" ADD COLUMN "credited_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "email_verifications" ADD CONSTRAINT "email_verifications_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "email_verifications_user_idx" ON "email_verifications" USING btree ("user_id");--> statement-breakpoint
CREATE POLICY "users_service" ON "users" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "sessions_service" ON "sessions" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "referrals_service" ON "referrals" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "api_keys_service" ON "api_keys" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "password_resets_service" ON "password_resets" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "mail_outbox_service" ON "mail_outbox" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "invites_service" ON "invites" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "devices_service" ON "devices" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "installations_service" ON "installations" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "passkeys_service" ON "passkeys" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "accounts_service" ON "accounts" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "security_events_service" ON "security_events" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "email_verifications_owner" ON "email_verifications" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "email_verifications_service" ON "email_verifications" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);