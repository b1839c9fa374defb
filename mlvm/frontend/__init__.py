"""Front ends: ways into the mlvm dialect other than its text."""
