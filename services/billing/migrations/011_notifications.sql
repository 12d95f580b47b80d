-- Notification endpoints (docs/api.md "Notifications"): at most one per organization, where
-- billing sends signed webhooks (Standard Webhooks) of the events it subscribed to. secret is
-- the signing secret ("whsec_" + base64), which signing needs in full; it is shown once when
-- created or rotated and never logged (docs/decisions.md, "Notification signing secrets").
CREATE TABLE billing.notification_endpoints (
  org_id text PRIMARY KEY,
  url text NOT NULL,
  events text[] NOT NULL,
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
