-- Roles and grants drizzle-kit does not emit. Every signed-in user's queries run as app_user
-- (see lib/db/rls.ts), so the tables' RLS policies apply even to the owner's connection.
-- Roles are cluster-wide: databases migrated at the same time (tests) may race to create it.
DO $$
BEGIN
  BEGIN
    CREATE ROLE app_user NOLOGIN;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
  END;
  BEGIN
    EXECUTE 'GRANT app_user TO ' || quote_ident(current_user);
  EXCEPTION WHEN others THEN
    -- a concurrent identical grant; fail only if the membership is really missing
    IF NOT pg_has_role(current_user, 'app_user', 'MEMBER') THEN RAISE; END IF;
  END;
END
$$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO app_user;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO app_user;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO app_user;
