"""Reading what users say about themselves by the structure of their sentences.

A pure core reads parsed sentences (:mod:`.parsed` records) into fact drafts
(:func:`.reader.read_statements`), known misparses repaired first (:mod:`.repairs`): clauses
and what governs them (:mod:`.clauses`), frames by predicate (:mod:`.frames`, :mod:`.verbs`,
:mod:`.copula`), values cut at the noun-phrase boundary (:mod:`.values`, :mod:`.arguments`),
and the words it knows (:mod:`.lexicon`). The I/O shell (:mod:`.parser`) loads spaCy's small
English pipeline on first use and turns its parses into records; nothing here imports spaCy at
import time.
"""
