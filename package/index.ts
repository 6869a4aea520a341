// The plugin's entry: the components of ../components/index.ts (Pulumi hosts every exported ComponentResource).
export * from "../components/index";
