"""The ``assemble`` and ``pins`` commands."""

from __future__ import annotations

import argparse
import json

from kenning.cli.inputs import read_json_file, read_text_file, store_location
from kenning.context.window import ContextWindow
from kenning.errors import InvalidInput
from kenning.memory import Memory
from kenning.records import Pin, Scope

__all__ = ["assemble", "describe_window", "pins"]

_DEFAULT_SYSTEM = "You are a helpful assistant."


def _open(args: argparse.Namespace, *, lexical_only: bool) -> Memory:
    path = store_location(args)
    if lexical_only:
        return Memory.open(path, embedder=None, resume=False)
    return Memory.open(path, resume=False)


def assemble(args: argparse.Namespace) -> int:
    if args.model is None and args.encoding is None:
        raise InvalidInput("assemble needs --model (e.g. gpt-4o) or --encoding (e.g. o200k_base)")
    system = _DEFAULT_SYSTEM
    if args.system_file:
        system = read_text_file(args.system_file, "--system-file")
    scope = Scope(args.tenant, args.user, args.session)
    tools = None
    if args.tools_file:
        tools = read_json_file(args.tools_file, "--tools-file")
        if not isinstance(tools, list):
            raise InvalidInput(f"--tools-file {args.tools_file} must hold a JSON list of tools")
    wider = {"session": None, "user": Scope(args.tenant, args.user), "tenant": Scope(args.tenant)}
    with _open(args, lexical_only=args.lexical_only) as memory:
        window = memory.assemble(
            scope, budget_tokens=args.budget, model=args.encoding or args.model,
            reserve_output_tokens=args.reserve_output, system=system, goal=args.goal,
            tools=tools, query=args.query, retrieve_from=wider[args.retrieve_from],
        )  # fmt: skip
    if args.json:
        print(json.dumps(window.to_json(), ensure_ascii=False, indent=2))
    else:
        print(describe_window(window))
    return 0


def describe_window(window: ContextWindow) -> str:
    """A readable account of a window: totals, each tier, then the messages."""
    exact = "exact" if window.exact else "approximate"
    lines = [
        f"{window.tokens} / {window.budget} tokens ({exact}, {window.encoding}); "
        f"utilization {window.utilization:.0%}, pressure {window.pressure.value}"
        + (" — DEGRADED: " + "; ".join(window.reasons) if window.degraded else "")
    ]
    for tier, account in window.tiers.items():
        skipped = f", {len(account.skipped)} skipped" if account.skipped else ""
        lines.append(
            f"  {tier.value:<10} {account.tokens:>6} tokens, {account.included} in{skipped}"
        )
    lines.append("")
    for message in window.messages:
        content = message.get("content") or ""
        for call in message.get("tool_calls") or ():
            function = call["function"]
            content += f"calls {function['name']}({function['arguments']}) as {call['id']}"
        lines.append(f"[{message['role']}] {content}")
    return "\n".join(lines)


def _pin_json(pin: Pin) -> dict[str, object]:
    return {
        "id": pin.id, "session": pin.scope.session, "kind": pin.kind.value, "key": pin.key,
        "value": pin.value, "version": pin.version,
        "amount": None if pin.amount is None else str(pin.amount), "currency": pin.currency,
        "status": pin.status.value, "source_event_id": pin.source_event_id,
        "created_at": pin.created_at.isoformat(),
        "closed_at": None if pin.closed_at is None else pin.closed_at.isoformat(),
    }  # fmt: skip


def _require_pin_args(args: argparse.Namespace) -> None:
    if args.user is None or args.session is None:
        raise InvalidInput(f"pins {args.action} needs --user and --session")
    if args.action == "close":
        if args.key is None:
            raise InvalidInput("pins close needs --key")
        return
    if args.kind is None:
        raise InvalidInput("pins set needs --kind (entity_id, amount, approval, ...)")
    if (args.amount is None) != (args.currency is None):
        raise InvalidInput(
            "--amount and --currency go together, e.g. --amount 42.50 --currency EUR"
        )
    if args.kind == "amount" and args.amount is None:
        raise InvalidInput("pins set --kind amount needs --amount and --currency")
    if args.value is None and args.amount is None:
        raise InvalidInput("pins set needs --value (or --amount and --currency)")


def pins(args: argparse.Namespace) -> int:
    if args.action != "list":
        _require_pin_args(args)
    scope = Scope(args.tenant, args.user, args.session)
    with _open(args, lexical_only=True) as memory:
        if args.action == "list":
            found = memory.context.pins(scope, history=args.history)
        elif args.action == "set":
            value = args.value
            if value is None and args.amount is not None and args.currency is not None:
                value = f"{args.amount} {args.currency.upper()}"
            found = [
                memory.context.set_pin(
                    scope, args.kind, value, key=args.key, amount=args.amount,
                    currency=None if args.currency is None else args.currency.upper(),
                )
            ]  # fmt: skip
        else:
            found = [memory.context.close_pin(scope, args.key)]
    if args.json:
        print(json.dumps([_pin_json(p) for p in found], ensure_ascii=False, indent=2))
    else:
        for pin in found:
            status = pin.status.value + (f", v{pin.version}" if pin.version > 1 else "")
            print(f"{pin.key}\t{pin.value}\t({pin.kind.value}, {status})")
    return 0
