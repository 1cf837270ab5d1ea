export * from './record';
export * from './direction';
export * from './match';
export * from './signals';
export * from './turn';
export * from './render';
export * from './memory';
