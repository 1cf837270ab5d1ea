export * from './models/index';
export * from './github/index';
export * from './events/index';
export * from './runner/run-action';
export * from './world';
export * from './github/git';
export * from './sample-repo/index';
export * from './lifecycle/index';
