/** Every target the run measures, printed as one table at the end. */
export const targets: { target: string; reached: string; met: boolean }[] = [];
export const aim = (target: string, reached: string, met: boolean) => targets.push({ target, reached, met });
