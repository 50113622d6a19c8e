ALTER TABLE "chat_jobs" ADD COLUMN "lease_id" text;--> statement-breakpoint
ALTER TABLE "chat_jobs" ADD COLUMN "lease_expires_at" timestamp with time zone;