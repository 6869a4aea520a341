// The plugin's entry: the component package (../index.ts). Pulumi hosts every exported ComponentResource.
export * from "../index";
