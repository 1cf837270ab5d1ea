/**
 * A GGUF (version 3) writer for the few value types a model file needs: llama.cpp's own file format, written by hand
 * so the interop test can make its model offline. Layout: header, metadata, tensor infos, then the tensor data, each
 * tensor aligned to `general.alignment` (32 bytes by default).
 */

export type GgufValue =
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'string[]'; value: readonly string[] }
  | { type: 'i32[]'; value: readonly number[] };

export interface GgufTensor {
  name: string;
  /** ggml order: the first dimension is the innermost (a row of the matrix). */
  dims: readonly number[];
  data: Float32Array;
}

const ALIGNMENT = 32;
const TYPE = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;
const GGML_TYPE_F32 = 0;

class Writer {
  private chunks: Buffer[] = [];
  length = 0;

  private push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }
  u32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.push(b);
  }
  i32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    this.push(b);
  }
  u64(n: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.push(b);
  }
  f32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(n);
    this.push(b);
  }
  string(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  raw(b: Buffer): void {
    this.push(b);
  }
  pad(): void {
    const rest = this.length % ALIGNMENT;
    if (rest !== 0) this.push(Buffer.alloc(ALIGNMENT - rest));
  }
  result(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function writeValue(w: Writer, v: GgufValue): void {
  switch (v.type) {
    case 'u32':
      w.u32(TYPE.u32);
      return w.u32(v.value);
    case 'f32':
      w.u32(TYPE.f32);
      return w.f32(v.value);
    case 'bool':
      w.u32(TYPE.bool);
      return w.raw(Buffer.from([v.value ? 1 : 0]));
    case 'string':
      w.u32(TYPE.string);
      return w.string(v.value);
    case 'string[]':
      w.u32(TYPE.array);
      w.u32(TYPE.string);
      w.u64(v.value.length);
      for (const s of v.value) w.string(s);
      return;
    case 'i32[]':
      w.u32(TYPE.array);
      w.u32(TYPE.i32);
      w.u64(v.value.length);
      for (const x of v.value) w.i32(x);
      return;
  }
}

/** The bytes of a GGUF file with `metadata` and F32 `tensors`. */
export function writeGguf(metadata: Readonly<Record<string, GgufValue>>, tensors: readonly GgufTensor[]): Buffer {
  const w = new Writer();
  w.raw(Buffer.from('GGUF', 'ascii'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(Object.keys(metadata).length);
  for (const [key, value] of Object.entries(metadata)) {
    w.string(key);
    writeValue(w, value);
  }
  let offset = 0;
  for (const t of tensors) {
    const elements = t.dims.reduce((a, b) => a * b, 1);
    if (elements !== t.data.length) throw new Error(`tensor ${t.name}: ${t.data.length} values for dims ${t.dims}`);
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML_TYPE_F32);
    w.u64(offset);
    offset += Math.ceil((elements * 4) / ALIGNMENT) * ALIGNMENT;
  }
  w.pad();
  for (const t of tensors) {
    w.raw(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.pad();
  }
  return w.result();
}
