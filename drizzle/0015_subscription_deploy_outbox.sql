CREATE TABLE "subscription_deploy_outbox" (
	"session_id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"job" jsonb NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "subscription_deploy_outbox" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "subscription_deploy_outbox" ADD CONSTRAINT "subscription_deploy_outbox_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "subscription_deploy_outbox_due_idx" ON "subscription_deploy_outbox" USING btree ("updated_at");--> statement-breakpoint
CREATE POLICY "subscription_deploy_outbox_service" ON "subscription_deploy_outbox" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
-- The outbox of subscription deploys (functions/stripe/deploy-outbox.ts): infrastructure, written and read only as
-- the service (the Stripe webhook, checkout verify and the deploy sweep). Like every table, forced RLS with the
-- service's door only; app_user gets no grant.
ALTER TABLE "subscription_deploy_outbox" FORCE ROW LEVEL SECURITY;
