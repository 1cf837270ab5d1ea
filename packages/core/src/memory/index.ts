export * from './entry';
export * from './file';
export * from './merge';
export * from './recall';
