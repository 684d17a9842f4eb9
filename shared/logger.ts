import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';

/** Powertools' standard line less its function ARN, memory size and sampling rate, and the name where its log group says it. */
class CompactLogFormatter extends LogFormatter {
  formatAttributes(attributes: UnformattedAttributes, additionalLogAttributes: LogAttributes): LogItem {
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        cold_start: attributes.lambdaContext?.coldStart,
        function_name: process.env.AWS_LAMBDA_LOG_GROUP_NAME ? undefined : attributes.lambdaContext?.functionName,
        function_request_id: attributes.lambdaContext?.awsRequestId,
        xray_trace_id: attributes.xRayTraceId,
      },
    }).addAttributes(additionalLogAttributes);
  }
}

/** One structured logger for every function; the trace id is appended per request. */
export const logger = new Logger({ serviceName: 'merchant-api', logFormatter: new CompactLogFormatter() });
