#!/usr/bin/env python3
"""The page's wasm by part, as docs/BENCHMARKS.md lists it.

    cargo build -p skirmish-client --target wasm32-unknown-unknown --profile wasm-release
    wasm-bindgen --keep-debug --target web --out-dir /tmp/kd \
        target/wasm32-unknown-unknown/wasm-release/skirmish_client.wasm
    twiggy top -n 100000 -f csv /tmp/kd/skirmish_client_bg.wasm > /tmp/tw.csv
    python3 docs/bench/wasm_parts.py /tmp/tw.csv

Each function or data item goes to one group by its (demangled) symbol;
the name sections are left out.
"""
import csv
import sys

TANK_CORE = ('skirmish_core::tanks', 'skirmish_core::shared::sim', 'skirmish_core::shared::combat',
             'skirmish_core::shared::config', 'skirmish_core::shared::input',
             'skirmish_core::shared::state', 'PlayerState', 'Quantised',
             'skirmish_core::shared::determinism')


def group(name):
    if name.startswith('custom section') or 'subsection' in name:
        return None
    if name.startswith('data['):
        return 'data (strings, tables)'
    if any(k in name for k in TANK_CORE):
        return 'the tank game in the library crate'
    if 'skirmish_core::' in name:
        return 'the library (skirmish-core)'
    if 'skirmish_client::render' in name or 'skirmish_client::input' in name:
        return "the tank game's page (render, input)"
    if 'skirmish_client::' in name:
        return 'the page shell (skirmish-client)'
    if any(k in name for k in ('dlmalloc', '__rdl', '__rust_alloc', '__rust_dealloc', '__rust_realloc')):
        return 'allocator'
    if 'libm' in name:
        return 'libm'
    if any(k in name for k in ('wasm_bindgen', 'js_sys', 'web_sys', 'wbg', '__wbindgen')):
        return 'wasm-bindgen glue'
    if any(k in name for k in ('flt2dec', 'fmt::float', 'fmt::num', 'dec2flt')):
        return 'number formatting'
    if any(k in name for k in ('core::', 'alloc::', 'std::', 'core[', 'alloc[', 'std[', 'compiler_builtins')):
        return 'std, core and alloc'
    return 'data and the rest'


def main(path):
    sizes = {}
    for row in csv.DictReader(open(path)):
        g = group(row['Name'])
        if g is not None:
            sizes[g] = sizes.get(g, 0) + int(row['ShallowSize'])
    total = sum(sizes.values())
    for g, v in sorted(sizes.items(), key=lambda x: -x[1]):
        print(f'| {g} | {v:,} | {100 * v / total:.0f} % |')
    print(f'total {total:,}')


if __name__ == '__main__':
    main(sys.argv[1])
