import java.lang.reflect.Field;

/**
 * Starts DynamoDB Local listening on one address only (127.0.0.1 unless -Ddynamodb.local.host=...),
 * with a connection backlog of 1024 (-Ddynamodb.local.backlog=...) instead of Java's default 50: a
 * burst of new connections from the stage processes (hundreds of concurrent requests in
 * `npm run bench`) otherwise overflows it, the kernel drops the SYNs, and the clients' retransmit
 * after 1 s exceeds the functions' 1 s connect timeout.
 *
 * DynamoDBLocal.jar has no option for the listen address: its Jetty server listens on every
 * interface, without authentication. This launcher builds the server exactly as the jar's own
 * main does (ServerRunner.createServerFromCommandLineArgs, same arguments), sets the host of its
 * Jetty connectors, then starts it. Everything is looked up by reflection, so it compiles with no
 * class path and runs on any Java 17+ (a JRE is enough: the compiled class is committed).
 *
 * Rebuild after a change (any JDK 17+):
 *   javac --release 17 -d local/dynamodb-local local/dynamodb-local/LoopbackDynamoDbLocal.java
 */
public final class LoopbackDynamoDbLocal {
  private LoopbackDynamoDbLocal() {}

  public static void main(String[] args) throws Exception {
    String host = System.getProperty("dynamodb.local.host", "127.0.0.1");
    int backlog = Integer.parseInt(System.getProperty("dynamodb.local.backlog", "1024"));
    Class<?> runner = Class.forName("software.amazon.dynamodb.services.local.main.ServerRunner");
    Object proxy = runner.getMethod("createServerFromCommandLineArgs", String[].class).invoke(null, (Object) args);
    Field field = proxy.getClass().getDeclaredField("server");
    field.setAccessible(true);
    Object jetty = field.get(proxy);
    Object[] connectors = (Object[]) jetty.getClass().getMethod("getConnectors").invoke(jetty);
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Object connector : connectors) {
      connector.getClass().getMethod("setHost", String.class).invoke(connector, host);
      connector.getClass().getMethod("setAcceptQueueSize", int.class).invoke(connector, backlog);
    }
    proxy.getClass().getMethod("start").invoke(proxy);
  }
}
