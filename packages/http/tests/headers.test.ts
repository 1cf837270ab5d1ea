import { describe, expect, it } from 'vitest';
import { FetchHeaders } from '../src';
import { provideSdkGlobals, SDK_GLOBALS } from '../src/headers';

// FetchHeaders stands in for the global Headers the model SDKs build their requests with: it must behave as fetch's
// does for everything they and nodeFetch do with it. Node's own class (undici's) is the reference.
describe('FetchHeaders', () => {
  const cases: [string, ConstructorParameters<typeof Headers>[0]][] = [
    ['a record', { 'Content-Type': 'application/json', 'X-Api-Key': ' k ', accept: 'a' }],
    [
      'pairs with a repeated name',
      [
        ['X-A', '1'],
        ['x-a', '2'],
        ['Set-Cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ],
    ],
    ['nothing', undefined],
  ];
  it.each(cases)('from %s: gets, iterates and joins as fetch’s Headers do', (_, init) => {
    const ours = new FetchHeaders(init as never);
    const node = new Headers(init);
    expect([...ours]).toEqual([...node]);
    expect([...ours.keys()]).toEqual([...node.keys()]);
    expect([...ours.values()]).toEqual([...node.values()]);
    expect(ours.getSetCookie()).toEqual(node.getSetCookie());
    for (const name of ['content-type', 'X-API-KEY', 'x-a', 'missing']) {
      expect(ours.get(name)).toBe(node.get(name));
      expect(ours.has(name)).toBe(node.has(name));
    }
    expect(Object.prototype.toString.call(ours)).toBe('[object Headers]');
  });

  it('sets, appends and deletes by case-insensitive name; copies another Headers', () => {
    const h = new FetchHeaders({ Accept: 'a' });
    h.append('ACCEPT', 'b');
    h.set('X-Stainless-Lang', 'js');
    h.delete('accept');
    h.append('x-stainless-lang', 'ts');
    const copy = new FetchHeaders(h);
    const seen: string[] = [];
    copy.forEach((value, name) => seen.push(`${name}=${value}`));
    expect(seen).toEqual(['x-stainless-lang=js, ts']);
  });

  it('refuses what fetch refuses: a bad name, a CR, LF or NUL in a value, a pair that is not a pair', () => {
    expect(() => new FetchHeaders({ 'bad name': 'x' })).toThrow(/not a valid header name/);
    expect(() => new FetchHeaders().set('x-a', 'one\r\nInjected: yes')).toThrow(/NUL, CR or LF/);
    expect(() => new FetchHeaders([['only-a-name']] as never)).toThrow(/\[name, value\]/);
    expect(() => new Headers({ 'bad name': 'x' })).toThrow(TypeError); // the same as Node's own
  });
});

describe('the FormData the bundled SDKs get (provideSdkGlobals)', () => {
  it('is no plain object, makes Node’s own FormData, and knows one for what it is', () => {
    provideSdkGlobals();
    const SdkFormData = (globalThis as unknown as Record<string, new () => FormData>)[SDK_GLOBALS.FormData]!;
    expect({} instanceof SdkFormData).toBe(false);
    expect(new URLSearchParams('a=1') instanceof SdkFormData).toBe(false);
    const made = new SdkFormData();
    made.append('a', '1');
    expect(made).toBeInstanceOf(FormData); // Node's class
    expect(made.get('a')).toBe('1');
    expect(new FormData() instanceof SdkFormData).toBe(true);
    expect((globalThis as unknown as Record<string, unknown>)[SDK_GLOBALS.Headers]).toBe(FetchHeaders);
  });
});
