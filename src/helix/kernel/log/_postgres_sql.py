"""The statements a PostgreSQL store creates runs and appends with, and its channel."""

from __future__ import annotations

from ._sql import EVENT_COLUMNS, RUN_COLUMNS

CHANNEL = "helix_events"
"""The channel every commit is announced on, as ``TOKEN RUN_ID FIRST_SEQ LAST_SEQ``."""

# The inserts are gated on the UPDATE's (or run INSERT's) RETURNING, which also sends
# the NOTIFY: queued only if the run advanced, delivered only if the statement commits.
CREATE = f"""
WITH created AS (
    INSERT INTO runs ({RUN_COLUMNS})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
    RETURNING pg_notify('{CHANNEL}', $17)
), stored_blobs AS (
    INSERT INTO blobs (hash, size, data)
    SELECT * FROM unnest($18::text[], $19::bigint[], $20::bytea[])
    WHERE EXISTS (SELECT FROM created)
    ON CONFLICT DO NOTHING
)
INSERT INTO events ({EVENT_COLUMNS})
SELECT * FROM unnest($21::text[], $22::bigint[], $23::text[], $24::integer[], $25::text[],
                     $26::bigint[], $27::text[], $28::text[], $29::text[])
WHERE EXISTS (SELECT FROM created)
"""
APPEND = f"""
WITH advanced AS (
    UPDATE runs SET next_seq = $1, status = coalesce($2, status), turns = greatest(turns, $3),
        input_tokens = input_tokens + $4, output_tokens = output_tokens + $5,
        cost_usd = cost_usd + $6, updated_at = $7
    WHERE id = $8 AND next_seq = $9 AND ($23::bigint IS NULL OR lease_epoch = $23)
    RETURNING pg_notify('{CHANNEL}', $10)
), stored_blobs AS (
    INSERT INTO blobs (hash, size, data)
    SELECT * FROM unnest($11::text[], $12::bigint[], $13::bytea[])
    WHERE EXISTS (SELECT FROM advanced)
    ON CONFLICT DO NOTHING
)
INSERT INTO events ({EVENT_COLUMNS})
SELECT * FROM unnest($14::text[], $15::bigint[], $16::text[], $17::integer[], $18::text[],
                     $19::bigint[], $20::text[], $21::text[], $22::text[])
WHERE EXISTS (SELECT FROM advanced)
"""
NEXT_SEQ = "SELECT next_seq, lease_epoch FROM runs WHERE id = $1"
