export { nodeFetch, BufferedResponse, ResponseHeaders } from './node-fetch';
export { FetchHeaders, provideSdkGlobals, SDK_GLOBALS } from './headers';
