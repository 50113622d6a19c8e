ALTER TABLE "chat_jobs" ADD COLUMN "lease_id" text;--> statement-breakpoint
ALTER TABLE "chat_jobs" ADD COLUMN "lease_expires_at" timestamp with time zone;--> statement-breakpoint
-- chat_jobs: the owner's claim now leases the job (lease id and expiry), and the lease holder ends it with a
-- result or a reason, as the user.
GRANT UPDATE ("lease_id", "lease_expires_at", "result") ON "chat_jobs" TO app_user;
