"""``babytris play``: play one game of a solved policy, placement by
placement, and write it as pictures (``--gif``, ``--html``, ``--strip``; see
:mod:`babytris.draw.frames`)."""

from __future__ import annotations

import argparse
import math
import sys
import time

from ..analysis.horizon import MAX_PLACEMENTS
from ..engine.resources import MemoryLimitError, format_bytes, gib_to_bytes
from ..files.persist import holds_lean_solution
from ..game.validation import check_int
from .common import EXIT_OK, Output, check_writable, rules_record, solution_from
from .options import conflicts, game_options

# Copies of each frame held at the peak of writing a GIF: the frames, their
# padded copies and Pillow's RGB and palette images (measured: 3.3 on 4x4);
# a strip holds them once more, in one picture and Pillow's copy of it.
GIF_COPIES = 4
STRIP_COPIES = 2

__all__ = ["play_command"]


def play_command(args: argparse.Namespace, out: Output) -> int:
    """Run ``babytris play``: the text of each placement, and the pictures asked for."""
    import babytris

    from ..draw.frames import ActionValues, candidate_moves, film_strip, frame, save_gif, save_html, save_png
    from ..draw.pictures import board_text
    from ..solvers.match import Match

    check_int("--placements", args.placements, 1, MAX_PLACEMENTS, high_text="10**9")  # (play()'s range)
    if args.solution:  # the file holds the game: an option that sets it would be ignored
        conflicts(args, game_options(), "--solution", "the file holds the game (rules, discount, opponent, ties)")
    elif "no_verify" in getattr(args, "given", ()):
        raise ValueError("--no-verify: only with --solution (a file loaded without its proof); here nothing is loaded")
    check_int("--seed", args.seed, 0, 2**64 - 1, high_text="2**64 - 1")  # (play()'s range)
    if not args.solution and args.opponent in ("minavg", "gaps"):
        raise ValueError(
            f"--opponent {args.opponent} is solved against a random player; play shows an optimal "
            f"policy: use random or minimax"
        )
    if args.delay is not None and not (math.isfinite(args.delay) and 0 <= args.delay <= 60):
        raise ValueError(f"--delay must be in [0, 60] seconds, got {args.delay}")
    pictures = {option: path for option, path in (("--gif", args.gif), ("--html", args.html), ("--strip", args.strip))}
    for option, path in pictures.items():
        if path:
            check_writable(option, path)
    lean = bool(args.solution) and holds_lean_solution(args.solution)
    if lean:  # (a lean file's policy plays on the game it reaches: one move a state, built from its board values)
        loaded = babytris.load_lean(args.solution, verify=not args.no_verify, max_memory=gib_to_bytes(args.max_memory))
        solution = loaded.played_game()
        valued: ActionValues = loaded  # (the pictures show every move's value: the lean solution's, on demand)
    elif args.solution:
        solution = babytris.load(args.solution, verify=not args.no_verify, max_memory=gib_to_bytes(args.max_memory))
    else:
        solution = solution_from(args, out)
    if not lean:
        valued = solution
    rules = solution.rules
    if solution.player != "optimal":
        raise ValueError(f"play: the solution's player is {solution.player!r}; it needs an optimal policy")
    delay = args.delay if args.delay is not None else (0.3 if sys.stdout.isatty() else 0.0)
    match = Match(rules, opponent=solution if solution.opponent_policy is not None else "random")
    game = match.stepped_game(seed=args.seed)
    if any(pictures.values()):
        _check_frames_fit(
            args, frame(rules, game.board, game.piece, game.score, 16, candidate_moves(valued, game, None))
        )
    who = "random pieces" if solution.opponent_policy is None else f"the {solution.opponent} opponent"
    out.line(
        f"{rules.width}x{rules.height}: the optimal policy (discount {solution.discount}) against {who}, "
        f"seed {args.seed}"
    )
    if lean:
        out.line(
            f"a lean solution: its policy plays on the boards it reaches ({solution.transitions.n_boards:,}), "
            "each move valued from the file's board values"
        )
    if rules.preview:  # (each placement's line names the pieces in sight: an opponent's committed ones)
        out.line(f"timing: {match.timing} (each line's 'next')")
    steps = []
    frames = []  # each state before its placement, with every move's value; then the last state
    while not game.over and game.placements < args.placements:
        # (with a bag, what is left in it; with hold, the slot)
        state = (game.board, game.piece, game.preview, game.held, game.locked, game.bag_left)
        placement = solution.best_action(*state)
        if placement is None:
            break  # the piece fits nowhere, the game is over
        value = solution.value(*state)
        if any(pictures.values()):  # (frames only for the pictures asked)
            frames.append(
                frame(rules, game.board, game.piece, game.score, 16, candidate_moves(valued, game, placement))
            )
        if placement == "hold":  # a step that places nothing
            out.line(f"\n     {game.piece_name} on hold  (value {value:.3f})")
            steps.append({"hold": game.piece_name, "board": game.board, "value": value, "points": 0.0, "lines": 0})
            game.hold()
            continue
        assert isinstance(placement, babytris.Placement)  # (best_action gives a Placement, "hold" or None)
        before, lines = game.board, game.lines
        # (with previews, the pieces already named: an opponent's are committed before this placement)
        queue = [rules.pieces[p].name for p in game.preview]
        points = game.place(placement)
        steps.append(
            {
                "piece": placement.piece,
                "rotation": placement.rotation,
                "column": placement.column,
                "row": placement.row,
                "board": before,
                "value": value,
                "points": points,
                "lines": game.lines - lines,
                **({"preview": queue} if rules.preview else {}),
            }
        )
        gained = f"  +{points:g}" if points else ""
        out.line(
            f"\n{game.placements:>3}. {placement.piece} at rotation {placement.rotation}, column "
            f"{placement.column}{'' if placement.row is None else f', row {placement.row}'}"
            f"{', next ' + ' '.join(queue) if queue else ''}  (value {value:.3f}){gained}  score {game.score:g}"
        )
        out.line(board_text(babytris.Board(before, rules.width, rules.height), placement, rules=rules))
        if delay and out.chatty:
            sys.stdout.flush()
            time.sleep(delay)
    if any(pictures.values()):  # (a game without pictures draws nothing: no draw extra needed)
        frames.append(frame(rules, game.board, None if game.over else game.piece, game.score, 16))
        title = f"babytris {rules.width}x{rules.height}: the optimal policy against {who}, seed {args.seed}"
        if args.gif:
            save_gif(frames, args.gif)
        if args.html:
            save_html(frames, args.html, title=title)
        if args.strip:
            save_png(film_strip(frames), args.strip)
    ending = "game over: the piece fits nowhere" if game.over else f"stopped after {game.placements} placements"
    out.line(f"\n{ending}; score {game.score:g}, {game.lines} lines, final board:")
    out.line(game.drawing())
    out.result(
        {
            "rules": rules_record(rules),
            "seed": args.seed,
            "opponent": solution.opponent,
            "verified": solution.verified,
            "placements": steps,
            "score": game.score,
            "lines": game.lines,
            "game_over": game.over,
            "final_board": game.board,
        }
    )
    return EXIT_OK


def _check_frames_fit(args: argparse.Namespace, first: object) -> None:
    """Refuse (MemoryLimitError, before the game) pictures whose frames would
    not fit in ``--max-memory``: every frame is kept until the pictures are
    written, each about the size of the ``first`` (the start, with every
    move of its piece drawn)."""
    per_frame = first.nbytes  # type: ignore[attr-defined]
    copies = (GIF_COPIES if args.gif or args.html else 1) + (STRIP_COPIES if args.strip else 0)
    need = (args.placements + 1) * per_frame * copies
    budget = gib_to_bytes(args.max_memory)
    if need > budget:
        raise MemoryLimitError(
            f"--placements: the pictures keep up to {args.placements + 1:,} frames of {format_bytes(per_frame)} "
            f"({copies} copies each while written): {format_bytes(need)}, more than --max-memory "
            f"{format_bytes(budget)}; ask fewer --placements (at most {budget // (per_frame * copies) - 1:,})"
        )
