"""The `llm-stream registry` subcommands: add, list, deprecate, diff.

Only the argument parsing lives here; each handler imports its module when it runs, so that
`llm-stream --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .cli import add_root

_ADD_EPILOG = """\
A proposal file (YAML) holds the members name, description, schema (the event's own fields, as
JSON Schema 2020-12), reference, status, reason, date, change_controller, contact, lifecycle
{place, block_kind, per_block, closes_with, completes_block, fragment_of, expected}, checks and
mappings; flags override it.
Without a proposal, --field PATH:TYPE[:required|optional[:DESCRIPTION]] builds the schema.
Nothing is written unless every check passes; exit 0 registered, 1 refused.
"""


def _add(args: argparse.Namespace) -> int:
    from .registry_add import register
    from .registry_proposal import (
        Proposal,
        RegistryError,
        mappings_from_flags,
        read_proposal,
        read_schema_file,
        schema_from_fields,
    )

    root = Path(args.root)
    try:
        proposal = read_proposal(Path(args.proposal)) if args.proposal else Proposal()
        overrides: dict[str, Any] = {
            "name": args.name, "description": args.description, "reference": args.reference,
            "status": args.status, "reason": args.reason, "date": args.date,
            "change_controller": args.change_controller, "contact": args.contact,
        }
        for key, value in overrides.items():
            if value is not None:
                setattr(proposal, key, value)
        flags = {key: getattr(args, key) for key in ("place", "block_kind", "per_block",
                                                      "closes_with")
                 if getattr(args, key) is not None}
        if flags:
            life = proposal.lifecycle if isinstance(proposal.lifecycle, dict) else {}
            proposal.lifecycle = {**life, **flags}
        if args.schema:
            proposal.schema = read_schema_file(Path(args.schema))
        if args.field:
            proposal.schema = schema_from_fields(args.field)
        if args.mapping:
            proposal.mappings = {**(proposal.mappings or {}), **mappings_from_flags(args.mapping)}
    except RegistryError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        print(f"{len(exc.problems)} problem(s): the registration is refused; nothing was "
              "written.", file=sys.stderr)
        return 1
    return register(root, proposal, dry_run=args.dry_run)


def _list(args: argparse.Namespace) -> int:
    from .registry_list import list_event_types

    return list_event_types(Path(args.root), reserved=args.reserved)


def _deprecate(args: argparse.Namespace) -> int:
    from .registry_deprecate import deprecate

    return deprecate(Path(args.root), args.name, args.reason or "")


def _diff(args: argparse.Namespace) -> int:
    from .registry_diff import run

    return run(args.old, args.new, against=args.against, root=Path(args.root),
               fail_on_breaking=args.fail_on_breaking)


def configure_registry(registry: argparse.ArgumentParser) -> None:
    """The subcommands of `registry`; each that reads or writes the tree takes `--root`."""
    def usage(_: argparse.Namespace) -> int:
        registry.print_help()
        return 2

    registry.set_defaults(handler=usage)
    sub = registry.add_subparsers(dest="registry_command")

    add = sub.add_parser(
        "add", help="register a new event type, or refuse and change nothing",
        epilog=_ADD_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("name", nargs="?", help="the event type, e.g. reasoning.delta")
    add.add_argument("--proposal", metavar="FILE", help="a proposal file (YAML)")
    add.add_argument("--description")
    add.add_argument("--reference", help="'#section-anchor', '#decision-<id>', an RFC or a URL")
    add.add_argument("--status", choices=("provisional", "permanent"))
    add.add_argument("--reason", help="why it is registered (required when provisional)")
    add.add_argument("--date", help="the registration date, YYYY-MM-DD (default: today)")
    add.add_argument("--change-controller", dest="change_controller")
    add.add_argument("--contact")
    add.add_argument("--place", help="the lifecycle place (registry/lifecycle.yaml)")
    add.add_argument("--block-kind", dest="block_kind", help="the block kind, for place block")
    add.add_argument("--per-block", dest="per_block", type=int, help="at most N a block")
    add.add_argument("--closes-with", dest="closes_with", help="the stop reason its block needs")
    add.add_argument("--schema", metavar="FILE", help="the own fields' schema, JSON or YAML")
    add.add_argument("--field", action="append", metavar="PATH:TYPE[:required[:DESCRIPTION]]",
                     help="one field of the schema (repeatable)")
    add.add_argument("--mapping", action="append", metavar="VENDOR=TEXT",
                     help="a vendor mapping hint (repeatable)")
    add.add_argument("--dry-run", dest="dry_run", action="store_true",
                     help="check and show the entry and schema; write nothing")
    add_root(add, writes=True)
    add.set_defaults(handler=_add)

    listing = sub.add_parser("list", help="the registered event types as a table")
    listing.add_argument("--reserved", action="store_true",
                         help="list the reserved names instead")
    add_root(listing, writes=False)
    listing.set_defaults(handler=_list)

    deprecate = sub.add_parser("deprecate", help="mark an event type deprecated, then regenerate")
    deprecate.add_argument("name")
    deprecate.add_argument("--reason", required=True, help="why, and what to use instead")
    add_root(deprecate, writes=True)
    deprecate.set_defaults(handler=_deprecate)

    diff = sub.add_parser(
        "diff", help="added, removed, deprecated event types and schema changes between versions",
    )
    diff.add_argument("old", nargs="?", help="a folder or a git ref")
    diff.add_argument("new", nargs="?", help="a folder or a git ref")
    diff.add_argument("--against", metavar="REF",
                      help="compare REF with the working tree; 'auto' picks the merge base with "
                           "the upstream branch, else HEAD~1, and skips when there is neither")
    diff.add_argument("--fail-on-breaking", dest="fail_on_breaking", action="store_true",
                      help="exit 1 on a breaking change to a permanent event type unless the "
                           "spec version was raised")
    diff.add_argument("--root", default=".", help="the project root and git repository")
    diff.set_defaults(handler=_diff)
