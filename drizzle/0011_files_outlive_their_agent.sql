ALTER TABLE "files" DROP CONSTRAINT "files_agent_id_agents_id_fk";
--> statement-breakpoint
ALTER TABLE "files" ALTER COLUMN "agent_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE set null ON UPDATE no action;