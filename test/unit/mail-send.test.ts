import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import * as mailClient from '#shared/mail/client';
import type { MailMessage } from '#shared/mail/messages';
import { deliverNotification, MalformedMessageError, sendMail } from '#shared/mail/send';
import { ddbMock, resetAwsMocks } from './support/aws';

const sesMock = mockClient(SESClient);
const KEY = { pk: 'M#m-1', sk: 'INVITE#i-1' };
const message = (text: string): MailMessage => ({ to: 'erin@example.com', subject: 'Join', text, html: `<p>${text}</p>` });

beforeEach(() => {
  resetAwsMocks();
  sesMock.reset();
  ddbMock.on(UpdateCommand).resolves({});
  sesMock.on(SendEmailCommand).resolves({ MessageId: 'm-1' });
});

describe('sendMail', () => {
  it('refuses text that is not well-formed Unicode before the SDK sees it', async () => {
    // Act
    const sending = sendMail(message('Join \ud800 us'));

    // Assess
    await expect(sending).rejects.toBeInstanceOf(MalformedMessageError);
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it('replaces the SES client after a failure inside the SDK, so it cannot spoil the next e-mail', async () => {
    // Prepare: what the SES query serializer throws on a value it cannot encode
    sesMock.on(SendEmailCommand).rejectsOnce(new URIError('URI malformed')).resolves({ MessageId: 'm-2' });
    const before = mailClient.ses;

    // Act
    await expect(sendMail(message('first'))).rejects.toThrow(URIError);
    await sendMail(message('second'));

    // Assess
    expect(mailClient.ses).not.toBe(before);
    expect(sesMock).toHaveReceivedCommandTimes(SendEmailCommand, 2);
  });

  it('keeps the client after an answer from SES (a failure with an HTTP status)', async () => {
    // Prepare
    sesMock
      .on(SendEmailCommand)
      .rejects(Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } }));
    const before = mailClient.ses;

    // Act
    await expect(sendMail(message('x'))).rejects.toThrow('Rate exceeded');

    // Assess
    expect(mailClient.ses).toBe(before);
  });
});

describe('deliverNotification', () => {
  it("records a malformed message as a permanent failed try, due again at once in its merchant's NOTIFY partition", async () => {
    // Act
    const sent = await deliverNotification(KEY, message('\udfff'), { notification: 'invite', uuid: 'i-1' });

    // Assess
    expect(sent).toBe(false);
    const update = ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(update?.ExpressionAttributeValues).toMatchObject({
      ':error': 'MalformedMessage: the text is not well-formed Unicode',
      ':attempts': 1,
      ':workPartition': 'M#m-1#NOTIFY',
    });
    expect(update?.ExpressionAttributeValues?.[':workSince']).toBe(update?.ExpressionAttributeValues?.[':now']);
  });
});
