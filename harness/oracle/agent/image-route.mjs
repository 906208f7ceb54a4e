// Reconstruction (PROBE_IMAGE=1): llm-replay 0.0.1-rc.1's adapter resolves a model
// without inputModalities; upstream's catalog declares image input for its vision
// model, so this declares it for that model id only, as read_image's route gate asks.
export const name = "image-route";
export const inject = ["llm"];
const imageModels = ["deepseek-v4-flash-vision-exp"];
export function apply(ctx) {
  const llm = ctx.llm;
  const resolve = llm.resolveModelInfo.bind(llm);
  llm.resolveModelInfo = async (provider, model, signal) => {
    if (!imageModels.includes(model)) return resolve(provider, model, signal);
    return { provider, id: model, name: model, inputModalities: ["text", "image"] };
  };
}
