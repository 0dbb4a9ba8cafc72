"""Messages on their way in, so that the analysis lets them through first.

A long analysis runs on the event loop in slices; a message from the client is
read in several turns of the loop (a header line, a blank line, the body, each
read in a thread), and each turn would otherwise wait for a slice of analysis.
The stream the server reads is watched (`watch`): as soon as a line of a
message is read, the analysis stops at the end of the item it is on and waits
(`let_through`) until the protocol has handled that message (`handled`), so a
hover never waits for the analysis of other items. A message that never comes
whole keeps it waiting `WAIT_SECONDS` at most.
"""

from __future__ import annotations

import asyncio
import threading
from typing import BinaryIO, cast

WAIT_SECONDS = 0.1
"""The longest the analysis waits for one message to be read and handled."""


class Incoming:
    """Whether a message is being read, and when it has been handled."""

    def __init__(self) -> None:
        self._arriving = threading.Event()  # (set by the reading thread)
        self._waiting: list[asyncio.Future[bool]] = []

    def watch(self, stream: BinaryIO) -> BinaryIO:
        """`stream` (the server's input), reporting here each line it gives (what
        pygls calls of it: `readline`, `read`)."""
        return cast(BinaryIO, _Watched(stream, self._arriving))

    def arriving(self) -> bool:
        """Whether a message has begun to arrive and is not handled yet."""
        return self._arriving.is_set()

    def handled(self) -> None:
        """The protocol has handled the message read (from the event loop)."""
        self._arriving.clear()
        waiting, self._waiting = self._waiting, []
        for future in waiting:
            if not future.done():
                future.set_result(True)

    async def let_through(self) -> None:
        """Wait, if a message is arriving, until it has been handled."""
        if not self._arriving.is_set():
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        self._waiting.append(future)
        # (not asyncio.wait_for, which before Python 3.12 swallows a cancellation that
        # comes in the turn the message is handled: an edit's, which cancels the
        # analysis waiting here, so that analyses of old versions went on)
        timer = loop.call_later(WAIT_SECONDS, _give_up, future)
        try:
            handled = await future
        finally:
            timer.cancel()
        if not handled:  # (a message that never came whole: do not wait again)
            self._arriving.clear()


def _give_up(future: asyncio.Future[bool]) -> None:
    if not future.done():
        future.set_result(False)


class _Watched:
    """A binary input stream whose `readline` says that a message is arriving."""

    def __init__(self, stream: BinaryIO, arriving: threading.Event) -> None:
        self._stream = stream
        self._arriving = arriving

    def readline(self) -> bytes:
        line = self._stream.readline()
        if line:
            self._arriving.set()
        return line

    def read(self, size: int = -1) -> bytes:
        return self._stream.read(size)
