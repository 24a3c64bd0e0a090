-- Kiro CLI v1 store: ~/.local/share/kiro-cli/data.sqlite3 (Linux), ~/Library/Application Support/kiro-cli/data.sqlite3 (macOS)
-- schema verbatim from aws/amazon-q-developer-cli@sync-prod-from-main crates/chat-cli/src/database/sqlite_migrations/008_multiple_conversations_per_path.sql
CREATE TABLE conversations_v2 (
    key TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    updated_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    PRIMARY KEY (key, conversation_id)
);
CREATE INDEX idx_conversations_v2_key_updated ON conversations_v2(key, updated_at DESC);
CREATE INDEX idx_conversations_v2_updated_at ON conversations_v2(updated_at DESC);
-- one row per conversation; key = the cwd path string; value = conversation_value.json (ConversationState JSON)
INSERT INTO conversations_v2 (key, conversation_id, value, created_at, updated_at)
VALUES ('/w', 'conv-0001', readfile('conversation_value.json'), 1774656926000, 1774656960000);
