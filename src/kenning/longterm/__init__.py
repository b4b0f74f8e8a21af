"""Long-term memory: facts extracted from what users say and tools return, consolidated
(duplicates reinforce, new values supersede, revocations close), with time validity, decay and
retention; profiles, consent, and versioned procedures."""
