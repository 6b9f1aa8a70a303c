"""``python -m posenc_lab --out DIR``: the whole experiment, one command.

Examples::

    python -m posenc_lab --out results/ch08/full            # ~25 min, 1 core
    python -m posenc_lab --preset quick --out /tmp/quick    # ~1 min
    python -m posenc_lab --out big --device cuda --d-model 256 --n-layers 4 \\
        --n-heads 8 --length 256 --steps 5000
"""

import argparse
import os
import sys

from .experiment import PRESETS, config_from, run_experiment
from .model import BEYOND, LAYOUTS


def _ints(text):
    return tuple(int(v) for v in text.split(","))


def _names(text):
    return tuple(v.strip() for v in text.split(",") if v.strip())


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m posenc_lab",
        description="Train short, test long: every position method in a "
                    "small character-level Transformer, several seeds; "
                    "writes OUT/results.json.")
    ap.add_argument("--out", required=True, help="output folder (new or empty)")
    ap.add_argument("--overwrite", action="store_true",
                    help="write into a non-empty --out, replacing its results")
    ap.add_argument("--preset", default="full", choices=tuple(PRESETS),
                    help="starting settings (default: full)")
    ap.add_argument("--methods", type=_names,
                    help="comma-separated, e.g. rope,alibi (default: all six)")
    ap.add_argument("--tasks", type=_names, help="lm,copy (default: both)")
    ap.add_argument("--seeds", type=int, metavar="N",
                    help="run seeds 0..N-1 (default: 3)")
    ap.add_argument("--d-model", type=int, dest="d_model")
    ap.add_argument("--n-layers", type=int, dest="n_layers")
    ap.add_argument("--n-heads", type=int, dest="n_heads")
    ap.add_argument("--length", type=int, dest="L",
                    help="training length L in characters")
    ap.add_argument("--steps", type=int, help="training steps of the LM")
    ap.add_argument("--batch-size", type=int, dest="batch_size")
    ap.add_argument("--lr", type=float)
    ap.add_argument("--base", type=float, help="base b of sinusoidal and rope")
    ap.add_argument("--rope-layout", choices=LAYOUTS, dest="rope_layout")
    ap.add_argument("--learned-beyond", choices=BEYOND, dest="learned_beyond",
                    help="what the learned table does past its L rows "
                         "(default: clamp, reuse the last row)")
    ap.add_argument("--eval-multiples", type=_ints, dest="eval_multiples",
                    help="evaluate at these multiples of L (default 1,2,4,8,16)")
    ap.add_argument("--finetune-steps", type=int, dest="finetune_steps")
    ap.add_argument("--finetune-factor", type=int, dest="finetune_factor")
    ap.add_argument("--copy-k", type=int, dest="copy_k",
                    help="longest copied string in training")
    ap.add_argument("--copy-steps", type=int, dest="copy_steps")
    ap.add_argument("--device", help="cpu (default), cuda, cuda:1, mps ...")
    ap.add_argument("--threads", type=int,
                    help="torch CPU threads (default 1; results depend on it)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="runs side by side in worker processes, each with "
                         "--threads threads (default 2, or 1 on one core; "
                         "the numbers do not depend on it)")
    ap.add_argument("--no-progress", action="store_true")
    return ap, ap.parse_args(argv)


def main(argv=None):
    ap, args = parse_args(argv)
    changes = {k: v for k, v in vars(args).items()
               if k not in ("out", "overwrite", "preset", "seeds", "jobs",
                            "no_progress")}
    if args.seeds is not None:
        changes["seeds"] = tuple(range(args.seeds))
    try:
        cfg = config_from(args.preset, **changes)
        results = run_experiment(cfg, args.out, overwrite=args.overwrite,
                                 progress=not args.no_progress, jobs=args.jobs)
    except ValueError as err:
        ap.error(str(err))
    print(f"wrote {args.out}/results.json ({len(results['runs'])} runs, "
          f"{results['wall_time_s']:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
