/** The Logger port over Powertools Logger (JSON lines with Lambda context), for the Lambda handlers. */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { childLogger, type LogFields, type Logger } from '../core/log';

export function powertoolsLogger(serviceName: string): Logger {
  const powertools = new PowertoolsLogger({ serviceName });
  const logger: Logger = {
    debug: (message, fields) => powertools.debug(message, fields ?? {}),
    info: (message, fields) => powertools.info(message, fields ?? {}),
    warn: (message, fields) => powertools.warn(message, fields ?? {}),
    error: (message, fields) => powertools.error(message, fields ?? {}),
  };
  // Fields merged into every line, as the core's other loggers do.
  logger.child = (fields: LogFields) => childLogger({ ...logger, child: undefined }, fields);
  return logger;
}
