// The AWS SDK's notice about Node 20 support says nothing about the code under test.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
