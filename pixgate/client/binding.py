"""Operations declared once and bound to either client: on a `Client` an operation returns
its answer, on an `AsyncClient` an awaitable of it; a listing is an iterator of every item
of every page, or an async one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, overload

from pixgate.client.calls import Call, Listing

P = ParamSpec("P")
T = TypeVar("T")


class SyncSender(Protocol):
    def send(self, call: Call[T]) -> T: ...

    def items(self, listing: Listing[T]) -> Iterator[T]: ...


class AsyncSender(Protocol):
    async def send(self, call: Call[T]) -> T: ...

    def items(self, listing: Listing[T]) -> AsyncIterator[T]: ...


class SyncBound:
    """Operations sent by a blocking session."""

    def __init__(self, sender: SyncSender) -> None:
        self._sender = sender


class AsyncBound:
    """Operations sent by an asyncio session."""

    def __init__(self, sender: AsyncSender) -> None:
        self._sender = sender


class operation(Generic[P, T]):
    """An operation whose request `build` describes, with `build`'s parameters and docs."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, instance: None, owner: Any = None) -> operation[P, T]: ...

    @overload
    def __get__(self, instance: SyncBound, owner: Any = None) -> Callable[P, T]: ...

    @overload
    def __get__(self, instance: AsyncBound, owner: Any = None) -> Callable[P, Awaitable[T]]: ...

    def __get__(self, instance: SyncBound | AsyncBound | None, owner: Any = None) -> Any:
        build = self._build
        if instance is None:  # on the class: the declaration itself, for help() and docs
            return self
        if isinstance(instance, AsyncBound):
            async_sender = instance._sender

            async def awaited(*args: P.args, **kwargs: P.kwargs) -> T:
                return await async_sender.send(build(*args, **kwargs))

            return _named(awaited, build)
        sync_sender = instance._sender

        def sent(*args: P.args, **kwargs: P.kwargs) -> T:
            return sync_sender.send(build(*args, **kwargs))

        return _named(sent, build)


class listing(Generic[P, T]):
    """A list of the API, walked page after page as one iterator of its items."""

    def __init__(self, build: Callable[P, Listing[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, instance: None, owner: Any = None) -> listing[P, T]: ...

    @overload
    def __get__(self, instance: SyncBound, owner: Any = None) -> Callable[P, Iterator[T]]: ...

    @overload
    def __get__(self, instance: AsyncBound, owner: Any = None) -> Callable[P, AsyncIterator[T]]: ...

    def __get__(self, instance: SyncBound | AsyncBound | None, owner: Any = None) -> Any:
        if instance is None:
            return self
        build = self._build
        sender = instance._sender

        def walked(*args: P.args, **kwargs: P.kwargs) -> Any:
            return sender.items(build(*args, **kwargs))

        return _named(walked, build)


def _named(bound: Callable[P, Any], build: Callable[..., Any]) -> Callable[P, Any]:
    """`bound` shown under the operation's name and docs (`help(client.cash_out)`)."""
    bound.__name__ = bound.__qualname__ = build.__name__
    bound.__doc__ = build.__doc__
    return bound
