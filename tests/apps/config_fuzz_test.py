#!/usr/bin/env python3
"""Seeded fuzzing of `strata train <config> --print-config` over mutated shipped configs.

Every mutated config must be either accepted (exit 0) or refused with exit 1 and one
`strata: error:` line that names the config file (where the YAML or a key went wrong);
never a crash, a signal, a sanitizer report or a silent failure. One case in four instead
keeps the config and adds a `--set key=value` (a real key from --help-config, or a typo of
one, with a junk value), whose refusal must name the `--set` argument. Python standard
library only.

usage: config_fuzz_test.py STRATA CONFIG_DIR [CASES] [SEED]
"""
import glob
import os
import random
import subprocess
import sys
import tempfile

import fuzz_verdict  # beside this file

# Fragments that break YAML structure or types: flow collections, anchors, tags,
# tabs, control bytes, out-of-range and non-finite numbers.
JUNK = [':', '- ', '[', ']', '{', '}', '"', "'", '#', '&a', '*a', '!!int ', '\t', '  ', '\n', '?', '|', '>', '%',
        '@', '\x00', '\x7f', '1e999', '-1', 'nan', '~', '0x10', '99999999999999999999', '.inf', '-0']
VALUES = JUNK + ['', 'true', '3', '0.5', 'abc', '[1, 2]', '{a: 1}', 'null', '1_000', '2147483648']


def mutate(rng, text):
    lines = text.split('\n')
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(7)
        k = rng.randrange(len(lines))
        if op == 0 and len(lines) > 1:
            lines.pop(k)  # a key or a section header goes missing
        elif op == 1:
            lines.insert(k, lines[rng.randrange(len(lines))])  # duplicates, keys in the wrong section
        elif op == 2:
            lines[k] = ' ' * rng.randint(0, 6) + lines[k].lstrip()  # wrong indentation
        elif op == 3:
            p = rng.randint(0, len(lines[k]))
            lines[k] = lines[k][:p] + rng.choice(JUNK) + lines[k][p:]
        elif op == 4 and ':' in lines[k]:
            lines[k] = lines[k].split(':')[0] + ': ' + rng.choice(VALUES)  # a bad value for a real key
        elif op == 5:
            s = '\n'.join(lines)
            lines = s[:rng.randint(0, len(s))].split('\n')  # truncated file
        elif lines[k]:
            p = rng.randrange(len(lines[k]))
            lines[k] = lines[k][:p] + lines[k][p + 1:]  # a typo
    return '\n'.join(lines)


def config_keys(strata):
    """The dotted keys `strata train --help-config` lists (first column of its key lines)."""
    out = subprocess.run([strata, 'train', '--help-config'], capture_output=True, timeout=60).stdout.decode()
    keys = [line.split()[0] for line in out.splitlines() if line.startswith('  ') and not line.startswith('   ')]
    return [k for k in keys if k[0].isalpha()]


def override(rng, keys):
    key = rng.choice(keys)
    if rng.random() < 0.2:
        p = rng.randrange(len(key))
        key = key[:p] + key[p + 1:]  # a typo
    value = rng.choice([v for v in VALUES if '\x00' not in v])  # an argument cannot hold NUL
    return f'{key}={value.strip()}'


def main():
    strata, config_dir = sys.argv[1], sys.argv[2]
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    configs = sorted(glob.glob(os.path.join(config_dir, '*.yaml')))
    if not configs:
        print(f'FAIL: no configs under {config_dir}')
        return 1
    keys = config_keys(strata)
    if len(keys) < 20:
        print(f'FAIL: --help-config lists {len(keys)} keys')
        return 1
    failures, codes = 0, {}
    with tempfile.TemporaryDirectory(prefix='strata-config-fuzz-') as tmp:
        env = dict(os.environ, STRATA_CACHE_DIR=os.path.join(tmp, 'cache'))
        path = os.path.join(tmp, 'mutated.yaml')
        for n in range(cases):
            source = rng.choice(configs)
            with open(source, encoding='utf-8') as f:
                text = f.read()
            extra = []
            if rng.random() < 0.25:
                extra = ['--set', override(rng, keys)]
            else:
                text = mutate(rng, text)
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
            r = subprocess.run([strata, 'train', path, '--print-config'] + extra, env=env, capture_output=True,
                               timeout=120)
            err = r.stderr.decode('utf-8', 'replace')
            codes[r.returncode] = codes.get(r.returncode, 0) + 1
            names, naming = ('--set', f'the override {extra[1]!r}') if extra else (path, 'the config file')
            problem = fuzz_verdict.problem(r.returncode, err, True, names, naming)
            if problem:
                failures += 1
                print(f'FAIL case {n} (from {os.path.basename(source)} {" ".join(extra)}): {problem}\n'
                      f'--- config ---\n{text}\n'
                      f'--- stderr ---\n{err[:2000]}')
    return fuzz_verdict.tally(cases, codes, failures, 'mutated configs', 'accepted and refused configs')


if __name__ == '__main__':
    sys.exit(main())
