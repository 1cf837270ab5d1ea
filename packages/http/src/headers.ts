/**
 * fetch's `Headers`, without undici. Node defines the global `Headers` lazily: its first use loads undici, ~30–50 ms of
 * CPU in a process that has just started (docs/performance.md). The model SDKs build every request's headers with the
 * global `Headers`, and HydraFlow sends their requests through its own fetch (node-fetch.ts), so nothing else of undici
 * is ever needed. The bundle hands the SDKs this class instead of the global (SDK_GLOBALS below).
 *
 * What it keeps of the WHATWG class: names are case-insensitive and validated, values trimmed of HTTP whitespace and
 * refused with a NUL, CR or LF; `get` joins repeated values with ", "; iteration is sorted by name, each `set-cookie`
 * on its own; `getSetCookie`. Left out: the guards of Request and Response headers (there is no Request here).
 */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

export type HeadersSource =
  FetchHeaders | Iterable<readonly [string, string]> | Record<string, string | readonly string[]> | undefined;

export class FetchHeaders implements Iterable<[string, string]> {
  protected readonly byName = new Map<string, string[]>();

  constructor(init?: HeadersSource) {
    if (init === undefined || init === null) return;
    if (typeof init !== 'object') throw new TypeError('Headers: expected an object or a sequence of pairs');
    if (Symbol.iterator in init) {
      for (const pair of init as Iterable<readonly string[]>) {
        if (pair.length !== 2) throw new TypeError('Headers: each pair must be [name, value]');
        this.append(pair[0]!, pair[1]!);
      }
    } else {
      for (const [name, value] of Object.entries(init)) this.append(name, String(value));
    }
  }

  append(name: string, value: string): void {
    const key = checkedName(name);
    const list = this.byName.get(key);
    if (list) list.push(checkedValue(name, value));
    else this.byName.set(key, [checkedValue(name, value)]);
  }

  set(name: string, value: string): void {
    this.byName.set(checkedName(name), [checkedValue(name, value)]);
  }

  delete(name: string): void {
    this.byName.delete(checkedName(name));
  }

  get(name: string): string | null {
    return this.byName.get(checkedName(name))?.join(', ') ?? null;
  }

  has(name: string): boolean {
    return this.byName.has(checkedName(name));
  }

  getSetCookie(): string[] {
    return [...(this.byName.get('set-cookie') ?? [])];
  }

  /** Sorted by name, as fetch's Headers iterate; each set-cookie on its own. */
  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.byName.keys()].sort()) {
      if (name === 'set-cookie') for (const value of this.byName.get(name)!) yield [name, value];
      else yield [name, this.byName.get(name)!.join(', ')];
    }
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(callback: (value: string, name: string, headers: this) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }
}

function checkedName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: "${text}" is not a valid header name`);
  return text.toLowerCase();
}

function checkedValue(name: string, value: string): string {
  const text = String(value).replace(HTTP_WHITESPACE, '');
  if (/[\0\r\n]/.test(text)) throw new TypeError(`Headers: the value of "${name}" holds a NUL, CR or LF`);
  return text;
}

/**
 * `FormData` that loads Node's only when one is made. The SDKs test every request body with `instanceof FormData`,
 * which is all HydraFlow ever does with it; a real FormData (tagged so) is checked against Node's class.
 */
function lazyFormData() {
  let real: (new (...args: unknown[]) => object) | undefined;
  const realClass = () => (real ??= globalThis.FormData as unknown as new (...args: unknown[]) => object);
  return class FormData {
    constructor(...args: unknown[]) {
      return new (realClass())(...args);
    }

    static [Symbol.hasInstance](value: unknown): boolean {
      const tagged =
        typeof value === 'object' && value !== null && Object.prototype.toString.call(value) === '[object FormData]';
      return tagged && value instanceof realClass();
    }
  };
}

/**
 * Where the bundled model SDKs find `Headers` and `FormData`: scripts/build.ts rewrites the chunks' free `Headers` and
 * `FormData` to these properties of globalThis (esbuild's define), and src/main.ts provides them before any SDK loads
 * (provideSdkGlobals). The SDKs use both on every request (`new Headers()`, `instanceof FormData`), and the first touch
 * of Node's own loads undici, which nothing else here needs; on Node 24 even reading or replacing the global does.
 */
export const SDK_GLOBALS = { Headers: '__hydraflowHeaders', FormData: '__hydraflowFormData' } as const;

export function provideSdkGlobals(): void {
  const target = globalThis as unknown as Record<string, unknown>;
  target[SDK_GLOBALS.Headers] ??= FetchHeaders;
  target[SDK_GLOBALS.FormData] ??= lazyFormData();
}
