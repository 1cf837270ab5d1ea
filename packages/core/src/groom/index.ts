export * from './schema';
export * from './questions';
export * from './fallback';
export * from './decision';
export * from './subissues';
export * from './triggers';
export * from './record';
export * from './data';
