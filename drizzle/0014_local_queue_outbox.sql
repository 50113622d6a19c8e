CREATE TABLE "queue_messages" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"message_id" text NOT NULL,
	"path" text NOT NULL,
	"body" text NOT NULL,
	"deduplication_id" text,
	"not_before" timestamp with time zone NOT NULL,
	"attempt" integer DEFAULT 0 NOT NULL,
	"retries" integer NOT NULL,
	"flow_control" jsonb,
	"schedule_id" text,
	"state" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "queue_messages_message_id_unique" UNIQUE("message_id")
);
--> statement-breakpoint
ALTER TABLE "queue_messages" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "queue_schedules" (
	"id" text PRIMARY KEY NOT NULL,
	"path" text NOT NULL,
	"cron" text NOT NULL,
	"body" text NOT NULL,
	"last_run_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "queue_schedules" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE INDEX "queue_messages_due_idx" ON "queue_messages" USING btree ("state","not_before","seq");--> statement-breakpoint
CREATE INDEX "queue_messages_dedup_idx" ON "queue_messages" USING btree ("deduplication_id","created_at");--> statement-breakpoint
CREATE POLICY "queue_messages_service" ON "queue_messages" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY "queue_schedules_service" ON "queue_schedules" AS PERMISSIVE FOR ALL TO "app_service" USING (true) WITH CHECK (true);--> statement-breakpoint
-- The embedded queue's outbox and schedules (infra/local-queue.ts): infrastructure, no user's rows. Like every table,
-- forced RLS with the service's door only; app_user gets no grant (only asService with the localQueue purpose).
ALTER TABLE "queue_messages" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "queue_schedules" FORCE ROW LEVEL SECURITY;
