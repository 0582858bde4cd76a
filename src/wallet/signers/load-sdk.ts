// Signer SDKs are optional peer dependencies, loaded only when a run uses that signer (cold start is benchmarked,
// and most users never install them): a missing one is one line saying what to install.
import { packageRoot } from '../../package-root.js';
import { UsageError } from '../../errors.js';

export interface SdkInfo {
  /** The package(s) to install, as `npm i -g` takes them. */
  install: string;
  /** The signer that needs it, e.g. "--signer aws:…". */
  forWhat: string;
}

export async function loadSdk<T>(load: () => Promise<T>, info: SdkInfo): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new UsageError(
        'signer_sdk_missing',
        `${info.forWhat} needs ${info.install
          .split(' ')
          .map((p) => p.replace(/@[~^]?\d[^ ]*$/, ''))
          .join(', ')}, which is not installed`,
        {
          // Into loopsign's own folder: a package installed beside a global loopsign (npm i -g …) is not one it can import.
          hint: `install it into loopsign's folder: npm install --no-save --prefix ${JSON.stringify(packageRoot())} ${info.install}`,
        },
      );
    }
    throw error;
  }
}
