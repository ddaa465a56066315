package approval

import "time"

// DefaultTokenTTL is the lifetime of the single-use token an approval
// mints when the configuration names none. The API, the activities and the
// outbox relay all mint tokens, so they share this default.
const DefaultTokenTTL = 300 * time.Second
