"""What the fuzz tests (config_fuzz_test.py, loader_fuzz_test.py) demand of one strata run,
and their closing tally."""


def problem(returncode, err, error_at_start, names, naming):
    """Why a run fails the contract, or None. A run must exit 0, or exit 1 with a
    `strata: error:` line (at the start of stderr when `error_at_start`) that contains
    `names`, the input it is about (`naming` says which, for the message)."""
    if 'Sanitizer' in err or 'runtime error:' in err:
        return 'sanitizer report'
    if returncode not in (0, 1):
        return f'exit code {returncode} (expected 0, or 1 with an error)'
    if returncode == 1:
        has_error = err.startswith('strata: error: ') if error_at_start else 'strata: error: ' in err
        if not has_error:
            return 'exit 1 without a "strata: error:" line'
        if names not in err:
            return f'the error does not name {naming}'
    return None


def tally(cases, codes, failures, inputs, both):
    """Prints the exit codes and returns the test's exit status. A fuzzer that never
    reaches the error paths (or never gets an input through) tests little, so fewer
    than a quarter refused or none accepted fails too (`both` names the two outcomes)."""
    print(f'{cases} {inputs}: exit codes {dict(sorted(codes.items()))}; {failures} failures')
    if codes.get(1, 0) < cases // 4 or codes.get(0, 0) == 0:
        print(f'FAIL: the mutations no longer reach both {both}')
        return 1
    return 1 if failures else 0
