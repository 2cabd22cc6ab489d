import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';
import { displayWidth, textTable } from '../../src/report/text-table.js';

test('a table: box rules, one space of padding, a rule under the header only, columns aligned as asked', () => {
  const text = textTable(
    [
      ['ttft_ms', '12.50'],
      ['e2el_ms', '1234.00'],
    ],
    { head: ['metric', 'p50'], align: ['left', 'right'] },
  );
  assert.equal(
    text,
    [
      '┌─────────┬─────────┐',
      '│ metric  │     p50 │',
      '├─────────┼─────────┤',
      '│ ttft_ms │   12.50 │',
      '│ e2el_ms │ 1234.00 │',
      '└─────────┴─────────┘',
    ].join('\n'),
  );
});

test('no rows: the header alone, with no rule under it', () => {
  assert.equal(textTable([], { head: ['a', 'bb'] }), ['┌───┬────┐', '│ a │ bb │', '└───┴────┘'].join('\n'));
});

test('colours, wide and non-ASCII characters take their terminal width: every line is as wide as the rules', () => {
  const red = (s: string): string => `\x1b[31m${s}\x1b[39m`;
  const rows = [
    ['日本語', red('+12.0%'), '…'],
    ['Δ', '±0.5', red('x')],
    ['short'], // a short row gets empty cells
  ];
  for (const color of [false, true]) {
    const lines = textTable(rows, { head: ['run', 'Δ%', 'n'], align: ['left', 'right', 'right'], color }).split('\n');
    const widths = new Set(lines.map((l) => displayWidth(l)));
    assert.equal(widths.size, 1, `color ${color}: ${lines.join('\n')}`);
    assert.equal(lines.length, 7);
    // The coloured cell keeps its codes; plain text is the same with or without colour.
    assert.ok(lines[3]!.includes(red('+12.0%')));
  }
  const plain = textTable(rows, { head: ['run', 'Δ%', 'n'] });
  const coloured = textTable(rows, { head: ['run', 'Δ%', 'n'], color: true });
  assert.equal(stripVTControlCharacters(coloured), stripVTControlCharacters(plain));
  assert.ok(coloured.includes('\x1b[36m run    \x1b[39m'), 'the header cells are cyan');
  assert.ok(coloured.startsWith('\x1b[90m┌'), 'the borders are grey');
  assert.ok(!plain.includes('\x1b[90m'));
});

test('displayWidth: ASCII by length, CJK as two columns, escape sequences as none', () => {
  assert.equal(displayWidth('p99.9'), 5);
  assert.equal(displayWidth('日本'), 4);
  assert.equal(displayWidth('\x1b[1mbold\x1b[22m'), 4);
  assert.equal(displayWidth('…±Δ'), 3);
});
