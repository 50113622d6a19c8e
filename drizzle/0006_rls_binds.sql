-- Row-level security that binds (#9 finding 5). The app connects as app_api, a login role that owns nothing
-- and holds no table privilege of its own: a query outside withUser (app_user) or asService (app_service)
-- is refused, and RESET ROLE inside withUser lands on app_api, which can read nothing. Migrations keep
-- running as the tables' owner; FORCE makes the policies bind the owner too.
-- Roles are cluster-wide: databases migrated at the same time (tests) may race to create it.
DO $$
BEGIN
  BEGIN
    CREATE ROLE app_api LOGIN NOINHERIT;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
  END;
  BEGIN
    GRANT app_user, app_service TO app_api;
  EXCEPTION WHEN others THEN
    IF NOT (pg_has_role('app_api', 'app_user', 'MEMBER') AND pg_has_role('app_api', 'app_service', 'MEMBER')) THEN RAISE; END IF;
  END;
END
$$;
--> statement-breakpoint
ALTER TABLE "users" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "sessions" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "referrals" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "api_keys" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "password_resets" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "mail_outbox" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "invites" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "devices" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "installations" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "passkeys" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "accounts" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "security_events" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "email_verifications" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
-- app_user gets exactly what the routes running as the signed-in user do (grep asUser/withUser), column by
-- column for UPDATE. Everything else a user's data goes through (credits, plan, email, verification,
-- referrals, sessions at sign-in, key use) is written by asService with a purpose in lib/db/cross-user.ts.
-- New tables get no default grant to app_user any more: each must be granted here, on purpose.
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE SELECT, INSERT, UPDATE, DELETE ON TABLES FROM app_user;--> statement-breakpoint
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM app_user;--> statement-breakpoint
-- users: a user reads their row, changes their name (PATCH /api/user) and password (change-password).
GRANT SELECT ON "users" TO app_user;--> statement-breakpoint
GRANT UPDATE ("name", "password_hash", "updated_at") ON "users" TO app_user;--> statement-breakpoint
-- sessions: the fresh-sign-in check reads them; change-password ends the user's other sessions.
GRANT SELECT, DELETE ON "sessions" TO app_user;--> statement-breakpoint
-- referrals: read-only from either side (the referrals_either_side policy); recorded and credited by the service.
GRANT SELECT ON "referrals" TO app_user;--> statement-breakpoint
-- api_keys: list, create, delete; last use is stamped by the key lookup (service).
GRANT SELECT, INSERT, DELETE ON "api_keys" TO app_user;--> statement-breakpoint
-- invites: a user reads the invites they made (invites_creator); creating one is the service's, see below.
GRANT SELECT ON "invites" TO app_user;--> statement-breakpoint
-- devices: register and pair (insert), approve / deny / revoke (status and last seen).
GRANT SELECT, INSERT ON "devices" TO app_user;--> statement-breakpoint
GRANT UPDATE ("status", "last_seen") ON "devices" TO app_user;--> statement-breakpoint
-- installations: registration upserts, heartbeat refreshes, the gateway token is read back.
GRANT SELECT, INSERT ON "installations" TO app_user;--> statement-breakpoint
GRANT UPDATE ("last_seen", "status", "gateway_token") ON "installations" TO app_user;--> statement-breakpoint
-- passkeys: list, add, remove; counter and last use are stamped at sign-in (service).
GRANT SELECT, INSERT, DELETE ON "passkeys" TO app_user;--> statement-breakpoint
-- accounts: a user sees their linked sign-in methods; linking and RISC changes are the service's.
GRANT SELECT ON "accounts" TO app_user;
-- password_resets, email_verifications, mail_outbox, security_events: nothing for app_user. Invites are made
-- by the service even for a user's own guest invite: a user inserting one could pick its audience (a plan).
