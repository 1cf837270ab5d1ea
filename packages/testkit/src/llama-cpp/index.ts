export { ensureLlamaServer, LLAMA_CPP_CACHE, NODE_LLAMA_CPP_VERSION, type LlamaServerBuild } from './build';
export { tinyModel, qwenTemplate } from './model';
export { startLlamaServer, startRoutingProxy, type LlamaServer, type ProxiedCall, type RoutingProxy } from './server';
