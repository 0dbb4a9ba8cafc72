"""A storm of edits and requests against the live language server (over stdio).

`run_storm(seed, steps)` starts `affine-lsp serve`, opens a few documents and sends,
at random (seeded): incremental edits (ranges inside lines, at and past their ends,
past the end of the document, whole-text replacements), requests of every kind at
random and out-of-range positions (also for documents that are not open, and with
unreadable params), `$/cancelRequest`s, bursts of edits without waiting, stale
`codeAction/resolve`s, documents closed and opened again. The client keeps its own
copy of each text, applying every change as the LSP specification says.

At the end it checks that the server is alive, that every request got an answer
(a result or an error), and that the diagnostics published for each document's
final version (and its semantic tokens) equal a fresh analysis of the final text.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from affine_lsp.checks import check_document, split_chunks
from affine_lsp.ide import semantic_tokens
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.settings import Settings
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing.lsp_client import LspClient
from affine_lsp.testing.mutate import TOKENS

SERVER = [sys.executable, "-m", "affine_lsp", "serve"]

INSERTIONS = [t.decode("utf-8", "replace") for t in TOKENS if b"\r" not in t] + [
    "é",
    "𝜆",
    "\n",
    "    ",
    "}\n",
    "affine.for %i = 0 to 10 {\n",
    "%v = affine.load %A[%i] : memref<10xf32>\n",
    "affine.store %v, %A[%i + 1] : memref<10xf32>\n",
    "#map = affine_map<(d0)[s0] -> (d0 + s0)>\n",
]


class TextModel:
    """The client's copy of a document, edited as LSP says: positions in UTF-16 code
    units; a character past the end of its line means the line's end, a line past
    the last means the end of the document."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _line_starts(self) -> list[int]:
        starts = [0]
        index = self.text.find("\n")
        while index != -1:
            starts.append(index + 1)
            index = self.text.find("\n", index + 1)
        return starts

    def index(self, line: int, character: int) -> int:
        starts = self._line_starts()
        if line >= len(starts):
            return len(self.text)
        start = starts[line]
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self.text)
        units = 0
        at = start
        while at < end and units < character:
            units += 2 if ord(self.text[at]) > 0xFFFF else 1
            at += 1
        return at

    def apply(self, change: dict) -> None:
        if "range" not in change:
            self.text = change["text"]
            return
        start, end = change["range"]["start"], change["range"]["end"]
        a = self.index(start["line"], start["character"])
        b = self.index(end["line"], end["character"])
        a, b = min(a, b), max(a, b)
        self.text = self.text[:a] + change["text"] + self.text[b:]

    def random_position(self, rng: random.Random) -> dict:
        """A position at a character boundary, at or past a line's end, or past the
        last line."""
        starts = self._line_starts()
        roll = rng.random()
        if roll < 0.05:
            return {"line": len(starts) + rng.choice([0, 1, 10**6]), "character": rng.randint(0, 9)}
        line = rng.randrange(len(starts))
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self.text)
        if roll < 0.2:
            return {"line": line, "character": (end - starts[line]) * 2 + rng.choice([0, 1, 10**6])}
        at = rng.randint(starts[line], end)
        units = sum(2 if ord(c) > 0xFFFF else 1 for c in self.text[starts[line] : at])
        return {"line": line, "character": units}


@dataclass
class OpenText:
    uri: str
    model: TextModel
    version: int


@dataclass
class StormReport:
    requests: int = 0
    answered: int = 0
    outcomes: Counter = field(default_factory=Counter)  # "result" or the error code
    changes: int = 0  # content changes sent (in `edits` didChange notifications)
    edits: int = 0
    cancellations: int = 0
    bursts: int = 0
    reopened: int = 0
    server_requests: int = 0
    documents_checked: int = 0
    diagnostics_equal: bool = False
    tokens_equal: bool = False
    alive: bool = False
    exit_code: int | None = None
    seconds: float = 0.0
    mismatches: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # final texts of mismatched documents

    def summary(self) -> str:
        errors = ", ".join(f"{code}: {n}" for code, n in sorted(self.outcomes.items(), key=str))
        return (
            f"requests sent {self.requests}, answered {self.answered} ({errors}); "
            f"{self.edits} didChange with {self.changes} changes, {self.bursts} bursts, "
            f"{self.cancellations} cancellations, {self.reopened} reopened; final diagnostics "
            f"of {self.documents_checked} documents equal a fresh analysis: "
            f"{self.diagnostics_equal} (semantic tokens: {self.tokens_equal}); server alive "
            f"{self.alive}, exit code {self.exit_code}; {self.seconds:.1f} s"
        )


class Storm:
    def __init__(
        self, client: LspClient, rng: random.Random, texts: list[str], report: StormReport
    ) -> None:
        self.client = client
        self.rng = rng
        self.seeds = texts
        self.report = report
        self.documents: list[OpenText] = []
        self.resolvable: list[dict] = []  # code actions with data, from earlier answers
        self.action_requests: list[int] = []  # codeAction requests not looked at yet

    # -- documents ------------------------------------------------------------------

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.documents = [d for d in self.documents if d.uri != uri]
        self.documents.append(OpenText(uri, TextModel(text), version))
        item = {"uri": uri, "languageId": "mlir", "version": version, "text": text}
        self.client.notify("textDocument/didOpen", {"textDocument": item})

    def reopen(self, document: OpenText) -> None:
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": document.uri}})
        # Versions go on growing (as editors do): a publication for the new document
        # cannot be mistaken for one of the old.
        self.open(document.uri, document.model.text, document.version + 1)
        self.report.reopened += 1

    def _change(self, document: OpenText) -> dict:
        rng = self.rng
        if rng.random() < 0.03:
            return {"text": rng.choice(self.seeds)}
        model = document.model
        start = model.random_position(rng)
        end = start if rng.random() < 0.4 else model.random_position(rng)
        a = model.index(start["line"], start["character"])
        b = model.index(end["line"], end["character"])
        if a > b:
            start, end = end, start
        roll = rng.random()
        if roll < 0.3:
            text = ""
        elif roll < 0.4 and model.text:
            at = rng.randrange(len(model.text))
            text = model.text[at : at + rng.randint(1, 200)]  # a paste
        else:
            text = "".join(rng.choice(INSERTIONS) for _ in range(rng.randint(1, 3)))
        return {"range": {"start": start, "end": end}, "text": text}

    def edit(self, document: OpenText) -> None:
        changes = []
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            change = self._change(document)
            document.model.apply(change)
            changes.append(change)
        document.version += 1
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": document.uri, "version": document.version},
                "contentChanges": changes,
            },
        )
        self.report.edits += 1
        self.report.changes += len(changes)

    # -- requests -------------------------------------------------------------------

    def _position(self, document: OpenText) -> dict:
        if self.rng.random() < 0.05:
            return {"line": self.rng.choice([-1, 2**31]), "character": self.rng.choice([-3, 0])}
        return document.model.random_position(self.rng)

    def request(self, document: OpenText) -> int:
        rng = self.rng
        uri = document.uri if rng.random() < 0.95 else "file:///not/open.mlir"
        here = self._position(document)
        there = self._position(document)
        span = {"start": here, "end": there}
        identifier = {"uri": uri}
        at = {"textDocument": identifier, "position": here}
        method, params = rng.choice(
            [
                ("textDocument/hover", at),
                ("textDocument/hover", at),
                ("textDocument/completion", at),
                ("textDocument/definition", at),
                ("textDocument/references", {**at, "context": {"includeDeclaration": True}}),
                ("textDocument/prepareRename", at),
                ("textDocument/rename", {**at, "newName": rng.choice(["%renamed", "bad name"])}),
                ("textDocument/documentSymbol", {"textDocument": identifier}),
                ("textDocument/foldingRange", {"textDocument": identifier}),
                ("textDocument/semanticTokens/full", {"textDocument": identifier}),
                ("textDocument/semanticTokens/range", {"textDocument": identifier, "range": span}),
                ("textDocument/inlayHint", {"textDocument": identifier, "range": span}),
                (
                    "textDocument/codeAction",
                    {
                        "textDocument": identifier,
                        "range": span,
                        "context": {"diagnostics": [], "triggerKind": 1},
                    },
                ),
                (
                    "textDocument/codeAction",
                    {
                        "textDocument": identifier,
                        "range": span,
                        "context": {"diagnostics": [], "only": ["refactor.rewrite"]},
                    },
                ),
                (  # an editor's lightbulb
                    "textDocument/codeAction",
                    {
                        "textDocument": identifier,
                        "range": span,
                        "context": {"diagnostics": [], "triggerKind": 2},
                    },
                ),
                (  # Neovim 0.7: no trigger kind
                    "textDocument/codeAction",
                    {"textDocument": identifier, "range": span, "context": {"diagnostics": []}},
                ),
                ("codeAction/resolve", self._resolvable()),
                ("affine-lsp/iterationDomain", at),
                (
                    "workspace/executeCommand",
                    {"command": "affine-lsp.checkWorkspace", "arguments": ["file:///etc"]},
                ),
                ("textDocument/noSuchRequest", at),
                ("textDocument/hover", {"textDocument": identifier}),  # no position
            ]
        )
        request_id = self.client.request(method, params)
        if method == "textDocument/codeAction":
            self.action_requests.append(request_id)
        self.report.requests += 1
        if rng.random() < 0.15:
            self.client.cancel(request_id)
            self.report.cancellations += 1
        return request_id

    def _resolvable(self) -> dict:
        """An action from an earlier answer (probably stale by now), or a made-up one."""
        answers = self.client.answers()
        for request_id in list(self.action_requests):
            answer = answers.get(request_id)
            if answer is None:
                continue
            self.action_requests.remove(request_id)
            self.resolvable += [a for a in answer.get("result") or [] if a.get("data")]
        if self.resolvable and self.rng.random() < 0.8:
            return self.rng.choice(self.resolvable)
        return {"title": "made up", "data": {"id": "nonsense"}}

    # -- the storm ------------------------------------------------------------------

    def step(self) -> None:
        rng = self.rng
        document = rng.choice(self.documents)
        roll = rng.random()
        if roll < 0.45:
            self.edit(document)
        elif roll < 0.9:
            self.request(document)
        elif roll < 0.97:
            self.report.bursts += 1
            for _ in range(rng.randint(5, 25)):
                self.edit(document)
                if rng.random() < 0.3:
                    self.request(document)
        elif roll < 0.99:
            self.reopen(document)
        else:
            self.client.cancel(rng.randint(1, max(1, self.report.requests + 5)))
            self.report.cancellations += 1

    def check_final(self, timeout: float) -> None:
        """Compare each document's last published diagnostics (and semantic tokens)
        with a fresh analysis of the client's copy of its text: the analysis the
        server makes of a document just opened (each `// -----` chunk on its own),
        which for a text of one chunk is `check_document`'s."""
        from affine_lsp.server import TokenEncoder, diagnostic_data

        options = Settings().check_options()
        diagnostics_equal = tokens_equal = True
        for document in self.documents:
            text = document.model.text
            published = self.client.diagnostics(document.uri, document.version, timeout)
            fresh = DocumentAnalysis.from_text(text, options=options)
            fresh.analyse_all()
            found = fresh.diagnostics()
            if not split_chunks(text.encode())[1:]:
                found = check_document(SourceDocument(text), options)
            expected = [diagnostic_data(fresh.document, document.uri, d) for d in found]
            if _canonical(published) != _canonical(expected):
                diagnostics_equal = False
                self.report.texts[document.uri] = text
                extra = sorted(set(_canonical(published)) - set(_canonical(expected)))
                missing = sorted(set(_canonical(expected)) - set(_canonical(published)))
                self.report.mismatches.append(
                    f"diagnostics of {document.uri}: published but not fresh {extra[:3]}, "
                    f"fresh but not published {missing[:3]}"
                )
            answer = self.client.call(
                "textDocument/semanticTokens/full", {"textDocument": {"uri": document.uri}}
            )
            encoder = TokenEncoder(fresh.document)
            for part in semantic_tokens.token_parts(fresh.document):
                encoder.add(part)
            if (answer.get("result") or {}).get("data") != encoder.data:
                tokens_equal = False
                self.report.mismatches.append(f"semantic tokens of {document.uri}")
            self.report.documents_checked += 1
        self.report.diagnostics_equal = diagnostics_equal
        self.report.tokens_equal = tokens_equal


def _canonical(diagnostics: list[dict]) -> list[str]:
    return sorted(json.dumps(d, sort_keys=True) for d in diagnostics)


def run_storm(
    seed: int,
    steps: int,
    texts: list[str],
    time_limit: float = 120.0,
    command: list[str] | None = None,
    env: dict | None = None,
    log: Path | None = None,
) -> StormReport:
    """Run a storm of `steps` random actions (or until `time_limit` seconds) on
    documents opened with `texts`; the report says what was sent and checked."""
    rng = random.Random(seed)
    report = StormReport()
    started = time.monotonic()
    with tempfile.TemporaryFile() as stderr:
        client = LspClient(command or SERVER, stderr=stderr, env=env)
        try:
            storm = Storm(client, rng, texts, report)
            answer = client.call(
                "initialize",
                {
                    "processId": None,
                    "rootUri": None,
                    "capabilities": {
                        "workspace": {"workspaceEdit": {"documentChanges": True}},
                        "general": {"positionEncodings": ["utf-16"]},
                    },
                },
                timeout=60,
            )
            assert "result" in answer, answer
            client.notify("initialized", {})
            for index, text in enumerate(texts[:3]):
                storm.open(f"file:///storm/doc{index}.mlir", text)
            for _ in range(steps):
                if time.monotonic() - started > time_limit:
                    break
                storm.step()
                if rng.random() < 0.05:  # now and then, let the server catch up
                    _settle(client, report, 60)
            _settle(client, report, 120)
            storm.check_final(120)
            report.alive = client.alive()
            report.server_requests = client.server_requests
        finally:
            answers = client.answers()
            report.requests = len(client.sent_requests)
            report.answered = sum(1 for i in client.sent_requests if i in answers)
            for request_id in client.sent_requests:
                error = answers.get(request_id, {}).get("error")
                if request_id in answers:
                    report.outcomes["result" if error is None else error.get("code")] += 1
            report.exit_code = client.stop()
            report.seconds = time.monotonic() - started
            if log is not None:  # the server's log, and what was sent to replay it
                stderr.seek(0)
                log.write_bytes(stderr.read())
                sent = "\n".join(json.dumps(m) for m in client.sent_notifications)
                log.with_suffix(".notifications.jsonl").write_text(sent + "\n")
    return report


def _settle(client: LspClient, report: StormReport, timeout: float) -> None:
    """Wait until every request sent so far has its answer."""
    deadline = time.monotonic() + timeout
    for request_id in client.unanswered():
        client.response(request_id, max(0.1, deadline - time.monotonic()))
