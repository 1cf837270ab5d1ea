export * from './record';
export * from './direction';
