-- A service token made by an operator reaches no further than its maker does now
-- (src/services/operators/principal.ts accessOfToken): disabling the maker or revoking
-- their grant takes the token's reach with it. Tokens made before (or by the CLI, or by
-- another service token) have no maker and keep their own grants.
ALTER TABLE admin_token ADD COLUMN made_by uuid REFERENCES operator (id);
