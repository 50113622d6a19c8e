CREATE TABLE "calendar_connections" (
	"user_id" text PRIMARY KEY NOT NULL,
	"calendar_id" text NOT NULL,
	"timezone" text NOT NULL,
	"key_id" text NOT NULL,
	"access_token" text NOT NULL,
	"refresh_token" text,
	"token_expires_at" timestamp with time zone,
	"connected" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "calendar_connections" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "credit_purchases" (
	"payment_id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"pack" integer NOT NULL,
	"credits" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "credit_purchases" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "provider_keys" (
	"user_id" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"key_id" text NOT NULL,
	"sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "provider_keys" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "stripe_events" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"outcome" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "stripe_events" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "subscription_deployments" (
	"deploy_key" text PRIMARY KEY NOT NULL,
	"customer_id" text NOT NULL,
	"subscription_id" text,
	"tier" text NOT NULL,
	"memory_gb" integer NOT NULL,
	"cpus" integer NOT NULL,
	"user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "subscription_deployments" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "stripe_customer_id" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "subscription_period_end" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "subscription_event_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "calendar_connections" ADD CONSTRAINT "calendar_connections_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_purchases" ADD CONSTRAINT "credit_purchases_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_keys" ADD CONSTRAINT "provider_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscription_deployments" ADD CONSTRAINT "subscription_deployments_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "credit_purchases_user_idx" ON "credit_purchases" USING btree ("user_id");--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_stripe_customer_id_unique" UNIQUE("stripe_customer_id");--> statement-breakpoint
CREATE POLICY "calendar_connections_owner" ON "calendar_connections" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "calendar_connections_service" ON "calendar_connections" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "credit_purchases_owner" ON "credit_purchases" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "credit_purchases_service" ON "credit_purchases" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "provider_keys_owner" ON "provider_keys" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "provider_keys_service" ON "provider_keys" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "stripe_events_service" ON "stripe_events" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "subscription_deployments_service" ON "subscription_deployments" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
ALTER TABLE "provider_keys" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "credit_purchases" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "stripe_events" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "subscription_deployments" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "calendar_connections" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
-- provider_keys: a user sets (enable-byok upserts), reads (provider only is ever shown) and removes their key.
GRANT SELECT, INSERT, DELETE ON "provider_keys" TO app_user;--> statement-breakpoint
GRANT UPDATE ("provider", "key_id", "sealed", "updated_at") ON "provider_keys" TO app_user;--> statement-breakpoint
-- credit_purchases: read-only for the buyer; granted by the Stripe webhook (service) once per payment.
GRANT SELECT ON "credit_purchases" TO app_user;--> statement-breakpoint
-- calendar_connections: the OAuth callback stores the connection as the user its signed state names; calls
-- refresh tokens and mark a revoked grant disconnected as that user.
GRANT SELECT, INSERT, DELETE ON "calendar_connections" TO app_user;--> statement-breakpoint
GRANT UPDATE ("calendar_id", "timezone", "key_id", "access_token", "refresh_token", "token_expires_at", "connected", "updated_at") ON "calendar_connections" TO app_user;
-- stripe_events, subscription_deployments: nothing for app_user (the webhook and the backend run as the service).
