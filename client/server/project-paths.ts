/** Loopwright's own folders, for the client and the command line: see activities/project-paths.ts, which the worker shares. */
export { defaultStateDir, defaultToolsDir, isInstalledPackage, projectRoot } from '../../activities/project-paths';
