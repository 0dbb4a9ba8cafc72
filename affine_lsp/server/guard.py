"""Isolation of handlers: an exception in one is logged and answered with an empty
result, so that it never takes the server (or another document) down. Errors
raised on purpose as `JsonRpcException` (e.g. a refused rename) pass through."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

from pygls.exceptions import JsonRpcException

logger = logging.getLogger("affine_lsp.server")

HandlerFunction = TypeVar("HandlerFunction", bound=Callable[..., Any])


def guarded(empty: Any = None) -> Callable[[HandlerFunction], HandlerFunction]:
    """Decorate a handler: exceptions become a log entry and `empty` as the result."""

    def decorate(handler: HandlerFunction) -> HandlerFunction:
        if inspect.iscoroutinefunction(handler):

            @functools.wraps(handler)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await handler(*args, **kwargs)
                except JsonRpcException:
                    raise  # a deliberate error answer
                except Exception:
                    logger.exception("%s failed", handler.__name__)
                    return empty

            return cast(HandlerFunction, run_async)

        @functools.wraps(handler)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return handler(*args, **kwargs)
            except JsonRpcException:
                raise  # a deliberate error answer
            except Exception:
                logger.exception("%s failed", handler.__name__)
                return empty

        return cast(HandlerFunction, run)

    return decorate
