CREATE TABLE "wallet_top_ups" (
	"payment_id" text PRIMARY KEY NOT NULL,
	"user_id" text,
	"wallet_address" text NOT NULL,
	"amount_cents" integer NOT NULL,
	"session_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "wallet_top_ups" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "payment_sessions" ALTER COLUMN "deposit_tx_hash" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "credit_units" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "payment_sessions" ADD COLUMN "source" text DEFAULT 'deposit' NOT NULL;--> statement-breakpoint
ALTER TABLE "wallet_top_ups" ADD CONSTRAINT "wallet_top_ups_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_top_ups" ADD CONSTRAINT "wallet_top_ups_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."payment_sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "wallet_top_ups_user_idx" ON "wallet_top_ups" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "payment_sessions_card_wallet_idx" ON "payment_sessions" USING btree ("wallet_address") WHERE source = 'card';--> statement-breakpoint
CREATE POLICY "wallet_top_ups_owner" ON "wallet_top_ups" AS PERMISSIVE FOR ALL TO "app_user" USING ("user_id" = current_setting('app.user_id', true)) WITH CHECK ("user_id" = current_setting('app.user_id', true));--> statement-breakpoint
CREATE POLICY "wallet_top_ups_service" ON "wallet_top_ups" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
ALTER TABLE "wallet_top_ups" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
-- wallet_top_ups: the webhook writes them as the service; the user who paid reads their own.
GRANT SELECT ON "wallet_top_ups" TO app_user;
-- users.credit_units: like credits, written only by the service (a spend, a give-back); read with the row.
