/**
 * Every input of every action is declared in its action.yml and documented, and nothing documented is undeclared:
 * docs/actions.md is rendered from the metadata (HYDRAFLOW_UPDATE_DOCS=1 rewrites it); the config keys that take an
 * input (packages/core CONFIG_VARIABLES, models.<role>) are declared on the root action, so GitHub never warns of an
 * unexpected input; and an input named in README or docs/ exists.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, KNOWN_ROLES, NON_CONFIG_ENV } from '@hydraflow/core';
import { actionsOf, updateActionsDoc } from './support/actions-doc';

const ROOT = join(import.meta.dirname, '..');
const DOC = join(ROOT, 'docs/actions.md');

describe('docs/actions.md and the actions’ metadata', () => {
  it('lists exactly the inputs and outputs every action.yml declares', () => {
    const current = readFileSync(DOC, 'utf8');
    const expected = updateActionsDoc(current, ROOT);
    if (process.env.HYDRAFLOW_UPDATE_DOCS === '1' && current !== expected) writeFileSync(DOC, expected);
    expect(current).toBe(expected);
  });

  it('declares on the root action every input a config key takes', () => {
    const declared = Object.keys(actionsOf(ROOT)[0]!.meta.inputs ?? {});
    const configInputs = [
      ...CONFIG_VARIABLES.map((v) => v.input),
      ...KNOWN_ROLES.map((role) => `model-${role.replace(/_/g, '-')}`),
    ];
    expect(configInputs.filter((input) => !declared.includes(input))).toEqual([]);
  });

  it('names no input in README or docs/ that no action declares', () => {
    const declared = new Set(actionsOf(ROOT).flatMap((a) => Object.keys(a.meta.inputs ?? {})));
    const pages = [
      join(ROOT, 'README.md'),
      ...readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(ROOT, 'docs', f)),
      ...readdirSync(join(ROOT, 'docs/adr')).map((f) => join(ROOT, 'docs/adr', f)),
    ];
    const named: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8');
      for (const m of text.matchAll(/\binputs? `([a-z][a-z0-9-]*)`/g)) named.push(`${page}: ${m[1]}`);
      // the inputs column of docs/configuration.md's key table
      if (page.endsWith('configuration.md'))
        for (const m of text.matchAll(/^\| `[^`]+` +\|[^|]*\|[^|]*\| `([a-z][a-z0-9-]*)` +\|/gm))
          named.push(`${page}: ${m[1]}`);
    }
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((n) => !declared.has(n.slice(n.lastIndexOf(': ') + 2)))).toEqual([]);
  });
});

describe('HYDRAFLOW_* variables, as documented', () => {
  const documented = (): Set<string> => {
    const pages = [
      join(ROOT, 'README.md'),
      ...readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(ROOT, 'docs', f)),
    ];
    return new Set(
      pages.flatMap((p) => [...readFileSync(p, 'utf8').matchAll(/\bHYDRAFLOW_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0])),
    );
  };
  /** What the code reads: config variables, secrets the template passes, and the development switches. */
  const read = (): Set<string> => {
    const files = ['src', 'packages', 'scripts', 'bench', 'tests', 'workflows-templates'].flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
        .filter((f) => f.isFile() && /\.(ts|yml)$/.test(f.name) && !f.parentPath.includes('node_modules'))
        .map((f) => join(f.parentPath, f.name)),
    );
    const names = new Set<string>([...CONFIG_VARIABLES.map((v) => v.env), ...NON_CONFIG_ENV]);
    for (const file of files)
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:env\.|secrets\.|vars\.)(HYDRAFLOW_[A-Z0-9_]+)/g))
        names.add(m[1]!);
    return names;
  };

  it('names only variables HydraFlow reads (HYDRAFLOW_MODEL_<ROLE> for any role)', () => {
    const known = read();
    const unknown = [...documented()].filter((v) => !known.has(v) && !/^HYDRAFLOW_MODEL_[A-Z_]+$/.test(v));
    expect(unknown).toEqual([]);
  });

  it('documents every variable HydraFlow reads', () => {
    const docs = documented();
    expect([...read()].filter((v) => !docs.has(v))).toEqual([]);
  });
});
